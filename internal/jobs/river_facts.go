package jobs

import (
	"encoding/json"
	"strings"

	"github.com/riverqueue/river/rivertype"
)

// The facts about River jobs that Go and the control database's SQL both
// rely on, in one place. The SQL side (the control database's functions
// river_state_not_started, river_state_unfinished, rollup_day_unfinished)
// says the same; TestRiverFactsAgreeWithSQL fails when the two disagree.

// Job kinds, as stored in river_job.kind.
const (
	KindRollupDay      = "rollup_day"
	KindDrainDirty     = "drain_dirty"
	KindRollupSchedule = "rollup_schedule"
	KindPartitions     = "partitions"
	KindPublishWindows = "publish_windows"
	KindMoveTurbine    = "move_turbine"
	KindJudgeStalls    = "judge_stalls"
)

// Argument keys of rollup_day jobs (the JSON tags of RollupDayArgs, which
// the SQL reads as args ->> key).
const (
	ArgFarmID = "farm_id"
	ArgDay    = "day"
	ArgShard  = "shard"
	ArgReason = "reason"
)

// Queues.
const (
	// ControlQueue runs the jobs that touch only the control database.
	ControlQueue = "control"
	// FastQueue runs the fast path's publications, alone.
	FastQueue = "fast"
	// StallQueue runs the stalled-turbine watcher's judgements of corrected
	// windows, one at a time.
	StallQueue = "stall"
	// rollupQueuePrefix + shard is the queue of one shard's rollups.
	rollupQueuePrefix = "rollup_"
)

// scheduleIDPrefix + farm id is the River periodic job id of a farm's
// nightly rollup (fleet.MaxFarmID keeps it under River's 128 characters).
const scheduleIDPrefix = "rollup_schedule_"

// ScheduleID is the periodic job id of farm's nightly rollup.
func ScheduleID(farm string) string { return scheduleIDPrefix + farm }

// Priorities: River runs 1 before 4. Dirty recomputes jump the queue.
const (
	PriorityDirty    = 1
	PriorityManual   = 2
	PrioritySchedule = 3
)

// NotStartedStates are the states of a job that has yet to start: it will
// still claim its request (SQL: river_state_not_started).
var NotStartedStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable, rivertype.JobStateScheduled,
}

// UnfinishedStates are the states of a job that will still run, or is
// running (SQL: river_state_unfinished).
var UnfinishedStates = append(append([]rivertype.JobState{}, NotStartedStates...), rivertype.JobStateRunning)

// RollupQueue is the queue of one shard's rollups: a slow or unreachable
// shard only holds up its own queue.
func RollupQueue(shard string) string { return rollupQueuePrefix + shard }

// ShardOfQueue is the shard whose rollup queue queue is (RollupQueue), or
// "" for the other queues.
func ShardOfQueue(queue string) string {
	shard, ok := strings.CutPrefix(queue, rollupQueuePrefix)
	if !ok {
		return ""
	}
	return shard
}

// unmarshalArgs decodes a job row's arguments.
func unmarshalArgs(j *rivertype.JobRow, v any) error { return json.Unmarshal(j.EncodedArgs, v) }
