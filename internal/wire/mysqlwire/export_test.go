package mysqlwire

// FD is c's socket descriptor, for tests that watch its reuse.
func FD(c *Conn) int { return c.s.Fd() }

// CacheMetadata reports whether c negotiated MariaDB's metadata caching.
func CacheMetadata(c *Conn) bool { return c.cacheMeta }
