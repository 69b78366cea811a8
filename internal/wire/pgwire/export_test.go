package pgwire

// AuthMethod is the authentication method the server asked c for: trust,
// password, md5 or scram-sha-256.
func AuthMethod(c *Conn) string { return c.auth }

// SaltedCached reports how many SCRAM salted passwords the process holds,
// after emptying the cache when reset.
func SaltedCached(reset bool) int {
	salted.mu.Lock()
	defer salted.mu.Unlock()
	if reset {
		salted.m = nil
	}
	return len(salted.m)
}
