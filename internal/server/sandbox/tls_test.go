package sandbox

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dbarena/dbarena/internal/server/target"
)

func parsePEMCert(t *testing.T, b []byte) *x509.Certificate {
	t.Helper()
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "CERTIFICATE" {
		t.Fatalf("not a PEM certificate: %q", b)
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestGenerateTLS: the server certificate is ECDSA P-256, signed by the
// CA, for 127.0.0.1, ::1 and localhost, and its key matches.
func TestGenerateTLS(t *testing.T) {
	caPEM, certPEM, keyPEM, err := generateTLS(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ca, cert := parsePEMCert(t, caPEM), parsePEMCert(t, certPEM)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	for _, host := range []string{"127.0.0.1", "::1", "localhost"} {
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: host, Roots: pool}); err != nil {
			t.Errorf("%s: %v", host, err)
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: "example.com", Roots: pool}); err == nil {
		t.Error("certificate valid for example.com")
	}
	pub, ok := cert.PublicKey.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		t.Fatalf("server key %T, want ECDSA P-256", cert.PublicKey)
	}
	blk, _ := pem.Decode(keyPEM)
	key, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !key.(*ecdsa.PrivateKey).PublicKey.Equal(pub) {
		t.Fatal("key does not match the certificate")
	}
}

// TestAddTLS: a TLS sandbox gets its CA (0600) in the sandbox directory,
// its server files in the server directory, the settings that turn TLS
// on before the user's, and the same certificates on every later start.
func TestAddTLS(t *testing.T) {
	m := NewManager(t.TempDir())
	for _, c := range []struct {
		flavor target.Flavor
		on     string
	}{{target.FlavorMariaDB, "ssl_cert"}, {target.FlavorPostgres, "ssl"}} {
		dir := t.TempDir()
		l := layout{Dir: dir, ServerDir: filepath.Join(dir, "server")}
		if err := os.Mkdir(l.ServerDir, 0o700); err != nil {
			t.Fatal(err)
		}
		rec := &record{Name: "box", Flavor: c.flavor, Layout: l}
		p := &startPlan{cfg: serverConfig{Settings: []Setting{{"max_connections", "10"}}}}
		if err := m.addTLS(rec, p); err != nil || len(p.tlsFiles) != 0 || len(p.cfg.Settings) != 1 {
			t.Fatalf("%s without TLS: %v, files %v, settings %v", c.flavor, err, p.tlsFiles, p.cfg.Settings)
		}
		rec.TLS = true
		if err := m.addTLS(rec, p); err != nil {
			t.Fatal(err)
		}
		ca := tlsCAPath(rec)
		fi, err := os.Stat(ca)
		if err != nil || fi.Mode().Perm() != 0o600 || filepath.Dir(ca) != dir {
			t.Fatalf("%s: CA %s: %v %v", c.flavor, ca, fi, err)
		}
		s := p.cfg.Settings
		if s[0].Key != c.on || s[len(s)-1].Key != "max_connections" {
			t.Fatalf("%s: settings %v", c.flavor, s)
		}
		if len(p.tlsFiles) != 2 {
			t.Fatalf("%s: server files %v", c.flavor, p.tlsFiles)
		}
		for _, f := range p.tlsFiles {
			if filepath.Dir(f.Path) != l.ServerDir {
				t.Fatalf("%s: %s not in the server directory", c.flavor, f.Path)
			}
		}
		if err := writeFiles(p.tlsFiles, osUser{}); err != nil {
			t.Fatal(err)
		}
		caPEM, _ := os.ReadFile(ca)
		again := &startPlan{}
		if err := m.addTLS(rec, again); err != nil {
			t.Fatal(err)
		}
		caAgain, _ := os.ReadFile(ca)
		if !bytes.Equal(caPEM, caAgain) || !bytes.Equal(again.tlsFiles[0].Content, p.tlsFiles[0].Content) {
			t.Fatalf("%s: certificates made again on a later start", c.flavor)
		}
	}
}
