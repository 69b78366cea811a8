package pgwire

// AuthMethod is the authentication method the server asked c for: trust,
// password, md5 or scram-sha-256.
func AuthMethod(c *Conn) string { return c.auth }
