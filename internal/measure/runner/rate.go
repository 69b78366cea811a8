package runner

import "time"

// Fixed-rate mode (Config.Rate): the pacer queues intended starts, the
// workers take them (worker.next), and an event that starts more than
// lateAfter behind its intended start is late; its latency counts from the
// intended start, so a slow server cannot hide its queueing (no
// coordinated omission).

// pace schedules rate-mode events: the n-th is due at t0 + n/Rate, whatever
// happened before (no drift), and goes into the queue when due, or is
// counted as dropped if the queue is full. Bursts after a stall catch up.
func (r *run) pace(done chan<- struct{}) {
	defer close(done)
	per := float64(time.Second) / r.cfg.Rate
	at := func(n int64) time.Duration { return time.Duration(float64(n) * per) }
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var n int64
	for !r.stopped.Load() {
		due := int64(float64(time.Since(r.t0))/per) + 1 // events due by now
		var dropped int64
		for ; n < due; n++ {
			select {
			case r.queue <- at(n):
			default:
				dropped++
			}
		}
		if dropped > 0 {
			var flags uint8
			if r.measured.Load() {
				flags = fMeasured
			}
			r.pacer.put(record{end: int64(time.Since(r.t0)), lat: dropped, kind: kDrop, flags: flags}, false)
		}
		wait := at(n) - time.Since(r.t0)
		if wait <= 0 {
			continue
		}
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-r.stopCh:
			return
		}
	}
}
