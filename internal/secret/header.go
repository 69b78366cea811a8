package secret

import "strings"

// IsSecretName reports whether an HTTP header or a URL query parameter
// named name carries a credential: Authorization, Proxy-Authorization,
// Cookie, X-Api-Key, X-Auth-Token, password, access_token, session ids
// and the like.
func IsSecretName(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "key", "sig", "cookie", "set-cookie":
		return true
	}
	for _, w := range [...]string{"pass", "pwd", "token", "secret", "apikey", "api_key", "api-key", "auth",
		"signature", "session", "credential", "cookie", "private"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// MaskHeader masks the value of a "Name: value" header whose name
// IsSecretName ("Authorization: ***"); other headers are returned as they
// are, and so is text without a colon.
func MaskHeader(h string) string {
	name, _, ok := strings.Cut(h, ":")
	if !ok || !IsSecretName(name) {
		return h
	}
	return name + ": ***"
}
