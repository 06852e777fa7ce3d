package engine

import (
	"context"
	"fmt"
)

// RecordIndexInfoForTest records info in s unless s has a record, as a
// store's first write does, for the package's external tests (the
// method, recordIndexInfo, is not exported).
func RecordIndexInfoForTest(ctx context.Context, s Searcher, info IndexInfo) error {
	r, ok := s.(indexRecorder)
	if !ok {
		return fmt.Errorf("record index info: %T records none", s)
	}
	_, _, err := r.recordIndexInfo(ctx, info)
	return err
}
