package runner

import "sync"

// callbacks runs the caller's callbacks in order on one goroutine, from an
// unbounded queue, so the coordinator never waits for them.
type callbacks struct {
	mu     sync.Mutex
	queue  []func()
	closed bool
	wake   chan struct{}
	done   chan struct{}
}

func startCallbacks() *callbacks {
	c := &callbacks{wake: make(chan struct{}, 1), done: make(chan struct{})}
	go c.loop()
	return c
}

// post queues f.
func (c *callbacks) post(f func()) {
	c.mu.Lock()
	c.queue = append(c.queue, f)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// close waits for every queued callback to return.
func (c *callbacks) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	<-c.done
}

func (c *callbacks) loop() {
	defer close(c.done)
	for {
		c.mu.Lock()
		q, closed := c.queue, c.closed
		c.queue = nil
		c.mu.Unlock()
		for _, f := range q {
			f()
		}
		if len(q) == 0 {
			if closed {
				return
			}
			<-c.wake
		}
	}
}
