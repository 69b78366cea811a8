package mysqlwire

// FD is c's socket descriptor, for tests that watch its reuse.
func FD(c *Conn) int { return c.fd }
