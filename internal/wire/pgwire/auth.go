package pgwire

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// ErrUnsupportedAuth says that the server asked for an authentication
// method this client does not speak (GSSAPI, SSPI, Kerberos...); callers
// fall back to a full driver.
var ErrUnsupportedAuth = errors.New("pgwire: unsupported authentication method")

// Authentication request codes (AuthenticationXXX messages).
const (
	authOK           = 0
	authCleartext    = 3
	authMD5          = 5
	authSASL         = 10
	authSASLContinue = 11
	authSASLFinal    = 12
)

// authenticate answers the server's authentication requests until
// AuthenticationOk.
func (c *Conn) authenticate(cfg Config) error {
	var sc *scram
	for range 8 {
		t, p, err := c.readMsg()
		if err != nil {
			return err
		}
		switch t {
		case 'E':
			return parseError(p)
		case 'N':
			continue
		case 'R':
		default:
			return errUnexpected(t, "authentication")
		}
		if len(p) < 4 {
			return errors.New("pgwire: short authentication request")
		}
		code, data := binary.BigEndian.Uint32(p), p[4:]
		switch code {
		case authOK:
			if c.auth == "" {
				c.auth = "trust"
			}
			return nil
		case authCleartext:
			c.auth = "password"
			c.password([]byte(cfg.Password))
		case authMD5:
			c.auth = "md5"
			if len(data) < 4 {
				return errors.New("pgwire: short md5 salt")
			}
			c.password(md5Password(cfg.User, cfg.Password, data[:4]))
		case authSASL:
			if !saslOffers(data, "SCRAM-SHA-256") {
				return fmt.Errorf("%w: SASL mechanisms %q", ErrUnsupportedAuth, bytes.ReplaceAll(data, []byte{0}, []byte{' '}))
			}
			c.auth = "scram-sha-256"
			sc = newSCRAM(cfg.Password)
			first := sc.clientFirst()
			at := c.begin('p')
			c.cstring("SCRAM-SHA-256")
			c.int32(len(first))
			c.wbuf = append(c.wbuf, first...)
			c.end(at)
		case authSASLContinue:
			if sc == nil {
				return errors.New("pgwire: SASL continue before SASL start")
			}
			final, err := sc.clientFinal(data)
			if err != nil {
				return err
			}
			at := c.begin('p')
			c.wbuf = append(c.wbuf, final...)
			c.end(at)
		case authSASLFinal:
			if sc == nil {
				return errors.New("pgwire: SASL final before SASL start")
			}
			if err := sc.verify(data); err != nil {
				return err
			}
			continue
		default:
			return fmt.Errorf("%w: request %d", ErrUnsupportedAuth, code)
		}
		if err := c.flush(); err != nil {
			return err
		}
	}
	return errors.New("pgwire: authentication did not finish")
}

// password queues a PasswordMessage.
func (c *Conn) password(pw []byte) {
	at := c.begin('p')
	c.wbuf = append(append(c.wbuf, pw...), 0)
	c.end(at)
}

// md5Password is "md5" + md5hex(md5hex(password + user) + salt).
func md5Password(user, password string, salt []byte) []byte {
	h := md5.Sum([]byte(password + user))
	inner := hex.EncodeToString(h[:])
	h = md5.Sum(append([]byte(inner), salt...))
	return []byte("md5" + hex.EncodeToString(h[:]))
}

// saslOffers reports whether the NUL-separated mechanism list has m.
func saslOffers(list []byte, m string) bool {
	for _, s := range bytes.Split(list, []byte{0}) {
		if string(s) == m {
			return true
		}
	}
	return false
}

// scram is the client side of SCRAM-SHA-256 (RFC 5802, RFC 7677) without
// channel binding, as PostgreSQL speaks it: the user name is the startup
// message's, so the client-first message leaves it empty. The password is
// used as it is (no SASLprep: ASCII passwords are their own SASLprep).
type scram struct {
	password    string
	nonce       string
	clientBare  string
	authMessage string
	salted      []byte
}

func newSCRAM(password string) *scram {
	var b [18]byte
	_, _ = rand.Read(b[:])
	return &scram{password: password, nonce: base64.RawStdEncoding.EncodeToString(b[:])}
}

func (s *scram) clientFirst() []byte {
	s.clientBare = "n=,r=" + s.nonce
	return []byte("n,," + s.clientBare)
}

// clientFinal answers the server-first message with the proof.
func (s *scram) clientFinal(serverFirst []byte) ([]byte, error) {
	var nonce, salt string
	iter := 0
	for _, f := range strings.Split(string(serverFirst), ",") {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		switch k {
		case "r":
			nonce = v
		case "s":
			salt = v
		case "i":
			iter, _ = strconv.Atoi(v)
		}
	}
	if !strings.HasPrefix(nonce, s.nonce) || len(nonce) == len(s.nonce) {
		return nil, errors.New("pgwire: SCRAM server nonce does not extend the client's")
	}
	rawSalt, err := base64.StdEncoding.DecodeString(salt)
	if err != nil || len(rawSalt) == 0 {
		return nil, errors.New("pgwire: bad SCRAM salt")
	}
	if iter < 1 || iter > 10_000_000 {
		return nil, fmt.Errorf("pgwire: bad SCRAM iteration count %d", iter)
	}
	if s.salted, err = saltedPassword(s.password, salt, rawSalt, iter); err != nil {
		return nil, fmt.Errorf("pgwire: SCRAM: %w", err)
	}
	withoutProof := "c=biws,r=" + nonce
	s.authMessage = s.clientBare + "," + string(serverFirst) + "," + withoutProof
	clientKey := hmacSum(s.salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	sig := hmacSum(stored[:], s.authMessage)
	for i := range sig {
		sig[i] ^= clientKey[i]
	}
	return []byte(withoutProof + ",p=" + base64.StdEncoding.EncodeToString(sig)), nil
}

// verify checks the server-final message's signature: the server knows
// the password too.
func (s *scram) verify(serverFinal []byte) error {
	v, ok := strings.CutPrefix(string(serverFinal), "v=")
	if !ok || s.salted == nil {
		return fmt.Errorf("pgwire: SCRAM server final message %q", serverFinal)
	}
	want := hmacSum(hmacSum(s.salted, "Server Key"), s.authMessage)
	got, err := base64.StdEncoding.DecodeString(v)
	if err != nil || !hmac.Equal(got, want) {
		return errors.New("pgwire: SCRAM server signature does not match")
	}
	return nil
}

func hmacSum(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// salted caches SaltedPassword := Hi(password, salt, i) by its inputs:
// PBKDF2 with the server's 4096 rounds costs the client about 2 ms of CPU
// per connection, 0.1 s of a run at 64 connections, and a server sends
// the same salt and count for a user every time. The proof stays per
// connection (its nonces). Held in memory only, as the password is.
var salted struct {
	mu sync.Mutex
	m  map[saltedKey][]byte
}

type saltedKey struct {
	password, salt string
	iter           int
}

// maxSalted bounds the cache: a run talks to a few servers as a few users.
const maxSalted = 64

// saltedPassword returns Hi(password, rawSalt, iter) (salt is rawSalt in
// base64, as the server sent it), computed once per process.
func saltedPassword(password, salt string, rawSalt []byte, iter int) ([]byte, error) {
	k := saltedKey{password, salt, iter}
	salted.mu.Lock()
	v, ok := salted.m[k]
	salted.mu.Unlock()
	if ok {
		return v, nil
	}
	// Hi() is PBKDF2 with HMAC-SHA-256 and one block.
	v, err := pbkdf2.Key(sha256.New, password, rawSalt, iter, sha256.Size)
	if err != nil {
		return nil, err
	}
	salted.mu.Lock()
	if salted.m == nil || len(salted.m) >= maxSalted {
		salted.m = map[saltedKey][]byte{}
	}
	salted.m[k] = v
	salted.mu.Unlock()
	return v, nil
}
