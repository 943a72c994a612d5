// Package soak is the bounded soak (make soak): the fleet it
// runs (a fleet at the design peak rate, 62,500 turbines at a 2-s cadence,
// and one Ardnave-sized farm whose 7.5-hour backlog is replayed), the live
// sender that posts one-second batches per farm over HTTP and counts what
// was acknowledged, the replay file and the counts it holds, the process
// samplers (memory, CPU) and the report. The test that drives the real
// processes with it is cmd/orchestrator/soak_test.go (build tag soak).
//
// Every expected count comes from what the generator sent, never from the
// pipeline's own tables: the sender knows each reading it got acknowledged,
// the replay writer each line it wrote.
package soak
