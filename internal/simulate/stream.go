package simulate

import (
	"context"
	"io"

	"github.com/galewatch/galewatch/internal/reading"
)

// Stream runs Generate in the background and serves its readings as a
// reading.Decoder, so a simulation can be fed to ingest without going
// through text. Line numbers are sequence numbers. wait returns the run's
// Stats once the decoder has been read to the end (or ctx ends).
func Stream(ctx context.Context, cfg Config) (dec reading.Decoder, wait func() (Stats, error)) {
	const chunk = 4096
	ch := make(chan []reading.Reading, 4)
	done := make(chan struct{})
	var st Stats
	var err error
	go func() {
		defer close(done)
		defer close(ch)
		buf := make([]reading.Reading, 0, chunk)
		st, err = Generate(cfg, func(r *reading.Reading) error {
			buf = append(buf, *r)
			if len(buf) == chunk {
				select {
				case ch <- buf:
				case <-ctx.Done():
					return ctx.Err()
				}
				buf = make([]reading.Reading, 0, chunk)
			}
			return nil
		})
		if err == nil && len(buf) > 0 {
			select {
			case ch <- buf:
			case <-ctx.Done():
				err = ctx.Err()
			}
		}
	}()
	return &streamDecoder{ch: ch}, func() (Stats, error) { <-done; return st, err }
}

type streamDecoder struct {
	ch   <-chan []reading.Reading
	buf  []reading.Reading
	line int64
	rec  reading.Record
}

func (d *streamDecoder) Next() (*reading.Record, error) {
	for len(d.buf) == 0 {
		b, ok := <-d.ch
		if !ok {
			return nil, io.EOF
		}
		d.buf = b
	}
	d.line++
	d.rec = reading.Record{Line: d.line, Reading: d.buf[0]}
	d.buf = d.buf[1:]
	return &d.rec, nil
}
