package rollup

import (
	"fmt"
	"testing"
)

// TestOverlapRanges: a correction's windows are split into shrinking
// ranges that partition them: one turbine's day into 4 (614, 399, 259,
// 168), 480 windows into 2 (291, 189), 279 into none (the last of two
// would hold fewer than 110).
func TestOverlapRanges(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{
		{1440, "[614 399 259 168]"},
		{480, "[291 189]"},
		{280, "[170 110]"},
		{279, "[]"},
		{10, "[]"},
	} {
		windows := make([]int, tc.n)
		for i := range windows {
			windows[i] = 2 * i // any sorted list: the ranges are runs of it
		}
		ranges := overlapRanges(windows)
		sizes := []int{}
		next := 0
		for _, r := range ranges {
			sizes = append(sizes, len(r))
			for _, w := range r {
				if w != windows[next] {
					t.Fatalf("%d windows: range holds %d where %d comes next", tc.n, w, windows[next])
				}
				next++
			}
		}
		if len(ranges) > 0 && next != tc.n {
			t.Fatalf("%d windows: the ranges hold %d", tc.n, next)
		}
		if got := fmt.Sprint(sizes); got != tc.want {
			t.Errorf("%d windows: ranges of %s, want %s", tc.n, got, tc.want)
		}
	}
}
