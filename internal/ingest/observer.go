package ingest

// Observer is told what ingest does with rows as it happens: a batch when
// its shard transaction ends, rejects when they are stored. serve counts
// them for /metrics (internal/metrics); ingest itself knows nothing of
// Prometheus. Calls come from several goroutines at once.
type Observer interface {
	// Batch: a batch of lane ended; accepted rows were stored, duplicate
	// rows were already stored, failed rows were not stored (the batch's
	// transaction failed).
	Batch(lane Lane, accepted, duplicate, failed int64)
	// Rejected: n lines were refused for reason and recorded in ingest_reject.
	Rejected(reason RejectReason, n int64)
	// RejectsLost: n refused lines could not be recorded in ingest_reject
	// (counted as failed in the summary).
	RejectsLost(n int64)
	// Early: n valid rows were ahead of their received_at by more than the
	// farm's early tolerance (counted when read, as the summary's early).
	Early(n int64)
	// Body: POST /v1/readings answered a body, with outcome.
	Body(outcome BodyOutcome)
}

// BodyOutcome is how an HTTP body ended, as the ingest command's exit
// status says it of a file: every line stored, some refused, or not all
// stored.
type BodyOutcome string

// The outcomes of a body.
const (
	// BodyStored: every line was stored or already stored (200).
	BodyStored BodyOutcome = "stored"
	// BodyWithRejects: some lines were refused, every valid one stored (200).
	BodyWithRejects BodyOutcome = "with_rejects"
	// BodyFailed: not every valid line was stored (lines failed, or the body
	// was turned away or cut before it was read whole): the sender re-sends.
	BodyFailed BodyOutcome = "failed"
)

// BodyOutcomes lists every BodyOutcome.
var BodyOutcomes = []BodyOutcome{BodyStored, BodyWithRejects, BodyFailed}

// bodyOutcome is the outcome of a body whose ingest ended with sum and err.
func bodyOutcome(sum Summary, err error) BodyOutcome {
	switch {
	case err != nil || sum.Failed > 0:
		return BodyFailed
	case sum.Rejected > 0:
		return BodyWithRejects
	}
	return BodyStored
}

// RejectReason is the kind of reason a line was refused for: a small fixed
// set (the full reason, with values, is in ingest_reject).
type RejectReason string

// The reasons a line is refused for.
const (
	// RejectInvalid: the line does not parse, or a field is missing or invalid.
	RejectInvalid RejectReason = "invalid"
	// RejectUnknownTurbine: no turbine of that id is registered.
	RejectUnknownTurbine RejectReason = "unknown_turbine"
	// RejectFuture: received_at or recorded_at beyond the future limit.
	RejectFuture RejectReason = "future"
	// RejectTooOld: recorded_at older than the farm's maximum age.
	RejectTooOld RejectReason = "too_old"
	// RejectRetention: recorded_at older than what the farm keeps.
	RejectRetention RejectReason = "retention"
	// RejectOutOfService: before the turbine's commissioning or at or
	// after its decommissioning.
	RejectOutOfService RejectReason = "out_of_service"
	// RejectImplausible: power_kw or wind_ms outside the farm's bounds
	// (power_min_kw, power_max_kw, wind_max_ms).
	RejectImplausible RejectReason = "implausible"
)

// RejectReasons lists every RejectReason.
var RejectReasons = []RejectReason{RejectInvalid, RejectUnknownTurbine, RejectFuture, RejectTooOld, RejectRetention, RejectOutOfService, RejectImplausible}

// noObserver is used when nobody listens.
type noObserver struct{}

func (noObserver) Batch(Lane, int64, int64, int64) {}
func (noObserver) Rejected(RejectReason, int64)    {}
func (noObserver) RejectsLost(int64)               {}
func (noObserver) Early(int64)                     {}
func (noObserver) Body(BodyOutcome)                {}
