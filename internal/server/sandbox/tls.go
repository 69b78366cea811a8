package sandbox

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/dbarena/dbarena/internal/server/target"
)

// File names of a TLS sandbox (Spec.TLS). The CA certificate is in the
// sandbox directory, for clients (tls-ca=, sslrootcert=); the server's
// certificate and key are in the server directory, owned by the server's
// OS user. All are 0600. The CA's key is never written: the certificates
// are made once, when TLS is first asked for.
const (
	tlsCAFile   = "tls-ca.pem"
	tlsCertFile = "tls-server-cert.pem"
	tlsKeyFile  = "tls-server-key.pem"
)

// tlsValidity is how long the generated certificates are valid.
const tlsValidity = 10 * 365 * 24 * time.Hour

// tlsPaths are the TLS files of a sandbox laid out as l.
func tlsPaths(l layout) (ca, cert, key string) {
	return filepath.Join(l.Dir, tlsCAFile), filepath.Join(l.ServerDir, tlsCertFile), filepath.Join(l.ServerDir, tlsKeyFile)
}

// tlsFiles returns the sandbox's TLS files, to be written with its
// config: the ones on disk if all three are there, new ones otherwise (a
// CA and a server certificate for 127.0.0.1 and localhost).
func tlsFiles(l layout) (caPEM, certPEM, keyPEM []byte, err error) {
	ca, cert, key := tlsPaths(l)
	caPEM, err1 := os.ReadFile(ca)
	certPEM, err2 := os.ReadFile(cert)
	keyPEM, err3 := os.ReadFile(key)
	if err := errors.Join(err1, err2, err3); err == nil {
		return caPEM, certPEM, keyPEM, nil
	}
	return generateTLS(time.Now())
}

// generateTLS makes an ECDSA P-256 CA and a server certificate it signs,
// valid from now for tlsValidity, in PEM.
func generateTLS(now time.Time) (caPEM, certPEM, keyPEM []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	serial := func() *big.Int {
		n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
		return n
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "dbarena sandbox CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(tlsValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("create CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(tlsValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("create server certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	return caPEM, certPEM, keyPEM, nil
}

// addTLS, for a TLS sandbox, writes the CA certificate for the invoking
// user, keeps the server's certificate and key in p.tlsFiles (written as
// the server's user, with the config) and turns TLS on in p's config,
// before the user's --set values.
func (m *Manager) addTLS(rec *record, p *startPlan) error {
	if !rec.TLS {
		return nil
	}
	if r, ok := p.eng.(tlsRefuser); ok {
		if err := r.refuseTLS(p.cfg); err != nil {
			return fmt.Errorf("%w: sandbox %q: %w", ErrInvalidSpec, rec.Name, err)
		}
	}
	caPEM, certPEM, keyPEM, err := tlsFiles(rec.Layout)
	if err != nil {
		return fmt.Errorf("sandbox %q: TLS certificates: %w", rec.Name, err)
	}
	ca, cert, key := tlsPaths(rec.Layout)
	if err := writePrivate(ca, caPEM, osUser{}); err != nil {
		return err
	}
	p.tlsFiles = []configFile{{Path: cert, Content: certPEM}, {Path: key, Content: keyPEM}}
	var on []Setting
	if rec.Flavor.Family() == target.Postgres {
		on = []Setting{{"ssl", "on"}, {"ssl_cert_file", cert}, {"ssl_key_file", key}}
	} else {
		on = []Setting{{"ssl_cert", cert}, {"ssl_key", key}}
	}
	p.cfg.Settings = append(on, p.cfg.Settings...)
	return nil
}

// tlsCAPath is the CA certificate of a TLS sandbox, "" without TLS.
func tlsCAPath(rec *record) string {
	if !rec.TLS {
		return ""
	}
	ca, _, _ := tlsPaths(rec.Layout)
	return ca
}
