package workload

import (
	"context"
	"sync"
)

// Parallel runs fn for jobs 0..jobs-1 on at most n goroutines, the way
// loaders spread tables, warehouses or chunks over --threads. The first
// error cancels the jobs not yet started and the context of those running,
// and is returned; otherwise Parallel returns ctx's error, if any.
func Parallel(ctx context.Context, n, jobs int, fn func(ctx context.Context, job int) error) error {
	if n > jobs {
		n = jobs
	}
	if n < 1 {
		return ctx.Err()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for job := range next {
				if err := fn(ctx, job); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		}()
	}
feed:
	for j := 0; j < jobs; j++ {
		select {
		case next <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
