package reading

import (
	"bytes"
	"io"
	"testing"
	"time"
)

// benchInput is n encoded readings in format f.
func benchInput(b *testing.B, f Format, n int) []byte {
	b.Helper()
	var buf bytes.Buffer
	enc := NewEncoder(f, &buf)
	t0 := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < n; i++ {
		r := Reading{TurbineID: "AP-123", RecordedAt: t0.Add(time.Duration(i) * 2 * time.Second),
			Available: i%7 != 0, PowerKW: float32(i%3000) + 0.5, WindMS: float32(i%25) + 0.25}
		if err := enc.Encode(&r); err != nil {
			b.Fatal(err)
		}
	}
	if err := enc.Flush(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func benchDecode(b *testing.B, f Format) {
	const n = 10000
	in := benchInput(b, f, n)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		dec, err := NewDecoder(f, bytes.NewReader(in))
		if err != nil {
			b.Fatal(err)
		}
		lines := 0
		for {
			rec, err := dec.Next()
			if err == io.EOF {
				break
			}
			if err != nil || rec.Problem != "" {
				b.Fatalf("%v %q", err, rec.Problem)
			}
			lines++
		}
		if lines != n {
			b.Fatalf("decoded %d lines, want %d", lines, n)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/line")
}

// BenchmarkDecodeNDJSON and BenchmarkDecodeCSV decode 10,000 good lines per
// iteration; allocs/op covers the decoder's setup plus every line.
func BenchmarkDecodeNDJSON(b *testing.B) { benchDecode(b, NDJSON) }
func BenchmarkDecodeCSV(b *testing.B)    { benchDecode(b, CSV) }
