package ingest

// For the benchmark's floors (package ingest_test): the writer's row and
// its allocation-free COPY source.
type Row = row

var NewCopySource = newCopySource

// ReadingsColumns are the columns the writer's COPY sends, in order.
var ReadingsColumns = readingsColumns
