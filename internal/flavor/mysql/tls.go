package mysql

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"strings"

	"github.com/dbarena/dbarena/internal/server/target"
)

// MySQL DSN parameters that configure TLS. They are read by dbarena, never
// sent to the server as session variables.
const (
	// ParamTLS is tls=true|skip-verify|preferred|false: true verifies the
	// server's certificate chain and host name, skip-verify encrypts
	// without verifying, preferred encrypts (without verifying) when the
	// server offers TLS and falls back to plain text otherwise.
	ParamTLS = "tls"
	// ParamTLSCA is a PEM file of CA certificates to verify the server
	// with instead of the system's; it implies tls=true when tls is unset.
	ParamTLSCA = "tls-ca"
	// ParamTLSCert and ParamTLSKey are a PEM client certificate and its key.
	ParamTLSCert = "tls-cert"
	ParamTLSKey  = "tls-key"
)

// mysqlTLSParam reports whether a MySQL DSN parameter configures TLS.
func mysqlTLSParam(k string) bool {
	switch k {
	case ParamTLS, ParamTLSCA, ParamTLSCert, ParamTLSKey:
		return true
	}
	return false
}

// TLS builds the TLS configuration of a MySQL-family target from its
// DSN parameters: nil for a plain connection; preferred reports that a
// server without TLS may be used in plain text. Errors are one line naming
// the parameter.
func TLS(t target.Target) (cfg *tls.Config, preferred bool, err error) {
	mode, hasMode := t.Params[ParamTLS]
	ca, cert, key := t.Params[ParamTLSCA], t.Params[ParamTLSCert], t.Params[ParamTLSKey]
	if !hasMode {
		mode = "false"
		if ca != "" || cert != "" {
			mode = "true"
		}
	}
	switch strings.ToLower(mode) {
	case "false", "0", "off", "disable", "disabled":
		return nil, false, nil
	case "true", "1", "on", "verify-full", "required":
		name := t.Host
		if name == "" {
			name = "localhost" // a unix socket
		}
		cfg = &tls.Config{ServerName: name}
	case "skip-verify":
		cfg = &tls.Config{InsecureSkipVerify: true}
	case "preferred":
		cfg, preferred = &tls.Config{InsecureSkipVerify: true}, true
	default:
		return nil, false, fmt.Errorf("DSN parameter tls=%q: want true, skip-verify, preferred or false", mode)
	}
	cfg.MinVersion = tls.VersionTLS12
	if ca != "" {
		pool, err := loadCAs(ParamTLSCA, ca)
		if err != nil {
			return nil, false, err
		}
		cfg.RootCAs = pool
	}
	if cert != "" || key != "" {
		kp, err := loadKeyPair(ParamTLSCert, cert, ParamTLSKey, key)
		if err != nil {
			return nil, false, err
		}
		cfg.Certificates = []tls.Certificate{kp}
	}
	return cfg, preferred, nil
}

// loadCAs reads a PEM file of CA certificates given as DSN parameter name.
func loadCAs(name, file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("DSN parameter %s: %w", name, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("DSN parameter %s: %s holds no PEM certificate", name, file)
	}
	return pool, nil
}

// loadKeyPair reads a client certificate and its key, both required.
func loadKeyPair(certName, cert, keyName, key string) (tls.Certificate, error) {
	switch {
	case cert == "":
		return tls.Certificate{}, fmt.Errorf("DSN parameter %s needs %s too", keyName, certName)
	case key == "":
		return tls.Certificate{}, fmt.Errorf("DSN parameter %s needs %s too", certName, keyName)
	}
	kp, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("DSN parameters %s/%s: %w", certName, keyName, err)
	}
	return kp, nil
}
