package rawsock

import (
	"context"
	"syscall"
)

// Waiter lets a lean client share its thread with other connections: the
// client makes its socket non-blocking, attaches it, and where a read
// would block it calls Wait instead, so that the thread serves another
// connection meanwhile (package poller implements it).
type Waiter interface {
	// Attach registers fd, a connected socket the client has just made
	// non-blocking.
	Attach(fd int) error
	// Wait returns once fd may have become readable (Abort's shutdown
	// makes it so), or after a while, so that the caller checks its
	// deadline.
	Wait(fd int)
}

type waiterKey struct{}

// WithWaiter returns ctx carrying w: the lean clients dialled with it
// attach their socket to w once connected.
func WithWaiter(ctx context.Context, w Waiter) context.Context {
	return context.WithValue(ctx, waiterKey{}, w)
}

// WaiterFrom returns the Waiter ctx carries, or nil.
func WaiterFrom(ctx context.Context) Waiter {
	w, _ := ctx.Value(waiterKey{}).(Waiter)
	return w
}

// Adopt makes the connected socket fd non-blocking and attaches it to w.
func Adopt(w Waiter, fd int) error {
	if err := syscall.SetNonblock(fd, true); err != nil {
		return err
	}
	return w.Attach(fd)
}

// AwaitWritable waits until the non-blocking socket fd can take more
// data, or up to WaitSlice (a full send buffer: rare, so the thread
// waits for this one socket alone).
func AwaitWritable(fd int) {
	_, _ = pollWritable(fd, WaitSlice)
}

// AwaitReadable waits until the non-blocking socket fd has data, or up to
// WaitSlice: a Waiter's wait when its thread is not shared yet (a worker
// setting up before the run).
func AwaitReadable(fd int) {
	const pollIn = 0x1
	_, _ = poll(fd, pollIn, WaitSlice)
}
