//go:build k8se2e

package e2e

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"sigs.k8s.io/yaml"
)

// controlPlane is etcd, kube-apiserver and kube-controller-manager on
// loopback, with their own CA, a token file and service-account keys.
type controlPlane struct {
	dir        string
	server     string // https://127.0.0.1:PORT
	caPEM      []byte
	adminToken string
	api        *apiClient // as the admin (system:masters)
	procs      []*exec.Cmd
	version    string
}

// freePort is a TCP port of 127.0.0.1 free right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func token() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writeKey writes an EC private key and returns it.
func writeKey(path string) (*ecdsa.PrivateKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, err
	}
	return k, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

// credentials writes the CA, the API server's serving certificate, the
// service-account key pair and the token file; it returns the CA's PEM
// and the admin's token.
func credentials(dir string) (caPEM []byte, admin string, err error) {
	caKey, err := writeKey(filepath.Join(dir, "ca.key"))
	if err != nil {
		return nil, "", err
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "dbarena-e2e-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, "", err
	}
	caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	srvKey, err := writeKey(filepath.Join(dir, "apiserver.key"))
	if err != nil {
		return nil, "", err
	}
	srv := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")}}
	caCert, _ := x509.ParseCertificate(caDER)
	srvDER, err := x509.CreateCertificate(rand.Reader, srv, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		return nil, "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "apiserver.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}), 0o644); err != nil {
		return nil, "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.crt"), caPEM, 0o644); err != nil {
		return nil, "", err
	}
	saKey, err := writeKey(filepath.Join(dir, "sa.key"))
	if err != nil {
		return nil, "", err
	}
	pub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644); err != nil {
		return nil, "", err
	}
	admin = token()
	// The controller-manager uses the admin's token too: one cluster
	// administrator, no bootstrap of per-controller credentials.
	csv := fmt.Sprintf("%s,admin,admin,\"system:masters\"\n", admin)
	return caPEM, admin, os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(csv), 0o600)
}

// kubeconfig writes a kubeconfig for server with a bearer token and a
// default namespace.
func kubeconfig(path, server string, caPEM []byte, tok, namespace string) error {
	cfg := map[string]any{
		"apiVersion":      "v1",
		"kind":            "Config",
		"current-context": "e2e",
		"clusters":        []any{map[string]any{"name": "e2e", "cluster": map[string]any{"server": server, "certificate-authority-data": caPEM}}},
		"users":           []any{map[string]any{"name": "e2e", "user": map[string]any{"token": tok}}},
		"contexts":        []any{map[string]any{"name": "e2e", "context": map[string]any{"cluster": "e2e", "user": "e2e", "namespace": namespace}}},
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// start starts bin's control plane in dir and waits until the API server
// is ready and the controller-manager runs.
func startControlPlane(ctx context.Context, bin, dir string, logw io.Writer) (*controlPlane, error) {
	caPEM, admin, err := credentials(dir)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	cp := &controlPlane{dir: dir, caPEM: caPEM, adminToken: admin}
	var ports [3]int
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return nil, err
		}
	}
	client, peer, secure := ports[0], ports[1], ports[2]
	f := func(name string) string { return filepath.Join(dir, name) }
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", client)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
	if err := cp.spawn(filepath.Join(bin, "etcd"), f("etcd.log"),
		"--name", "e2e", "--data-dir", f("etcd"), "--unsafe-no-fsync",
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "e2e="+peerURL, "--log-level", "warn"); err != nil {
		return nil, err
	}
	cp.server = fmt.Sprintf("https://127.0.0.1:%d", secure)
	if err := cp.spawn(filepath.Join(bin, "kube-apiserver"), f("kube-apiserver.log"),
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", fmt.Sprint(secure),
		"--tls-cert-file", f("apiserver.crt"), "--tls-private-key-file", f("apiserver.key"),
		"--client-ca-file", f("ca.crt"), "--token-auth-file", f("tokens.csv"),
		"--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", f("sa.pub"), "--service-account-signing-key-file", f("sa.key"),
		"--service-cluster-ip-range", "10.0.0.0/24",
		// The default reconciler would publish 127.0.0.1 as the
		// kubernetes Service's endpoint, which the API refuses.
		"--endpoint-reconciler-type", "none",
		"--cert-dir", f("certs"), "--enable-priority-and-fairness=false", "--v", "1"); err != nil {
		cp.stop()
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	cp.api = &apiClient{server: cp.server, token: admin,
		http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		code, body, err := cp.api.raw(ctx, "GET", "/readyz", nil, "")
		if err == nil && code == 200 {
			break
		}
		if time.Now().After(deadline) {
			cp.stop()
			return nil, fmt.Errorf("kube-apiserver not ready after 2m (%d %s %v); see %s", code, body, err, f("kube-apiserver.log"))
		}
		if err := sleep(ctx, 200*time.Millisecond); err != nil {
			cp.stop()
			return nil, err
		}
	}
	var v struct{ GitVersion string }
	if err := cp.api.do(ctx, "GET", "/version", nil, &v); err != nil {
		cp.stop()
		return nil, err
	}
	cp.version = v.GitVersion
	if err := kubeconfig(f("admin.kubeconfig"), cp.server, caPEM, admin, "default"); err != nil {
		cp.stop()
		return nil, err
	}
	if err := cp.spawn(filepath.Join(bin, "kube-controller-manager"), f("kube-controller-manager.log"),
		"--kubeconfig", f("admin.kubeconfig"), "--leader-elect=false",
		"--controllers", "job-controller,ttl-after-finished-controller,serviceaccount-controller,garbage-collector-controller",
		"--service-account-private-key-file", f("sa.key"), "--root-ca-file", f("ca.crt"),
		"--use-service-account-credentials=false", "--bind-address", "127.0.0.1", "--secure-port", "0", "--v", "1"); err != nil {
		cp.stop()
		return nil, err
	}
	fmt.Fprintf(logw, "control plane: kube-apiserver %s at %s, etcd at %s, logs in %s\n", cp.version, cp.server, etcdURL, dir)
	return cp, nil
}

// spawn starts a process of the control plane, its output to logFile.
func (cp *controlPlane) spawn(path, logFile string, args ...string) error {
	lf, err := os.Create(logFile)
	if err != nil {
		return err
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return fmt.Errorf("start %s: %w", filepath.Base(path), err)
	}
	cp.procs = append(cp.procs, cmd)
	go func() { _ = cmd.Wait(); lf.Close() }()
	return nil
}

// stop ends the processes it started, last first, by pid.
func (cp *controlPlane) stop() {
	for i := len(cp.procs) - 1; i >= 0; i-- {
		p := cp.procs[i].Process
		_ = p.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() {
			for p.Signal(syscall.Signal(0)) == nil {
				time.Sleep(50 * time.Millisecond)
			}
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.Kill()
		}
	}
	cp.procs = nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// apiClient speaks to the API server in JSON with a bearer token: plain
// net/http and the k8s.io/api types.
type apiClient struct {
	server, token string
	http          *http.Client
}

// apiError is a non-2xx answer.
type apiError struct {
	Code int
	Body string
}

func (e *apiError) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.Code, strings.TrimSpace(e.Body))
}

func isCode(err error, code int) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Code == code
}

func (c *apiClient) raw(ctx context.Context, method, path string, body []byte, contentType string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.server+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if contentType == "" {
		contentType = "application/json"
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// do sends in (JSON, unless []byte) and decodes the answer into out.
func (c *apiClient) do(ctx context.Context, method, path string, in, out any) error {
	var body []byte
	switch v := in.(type) {
	case nil:
	case []byte:
		body = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		body = b
	}
	code, b, err := c.raw(ctx, method, path, body, "")
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if code/100 != 2 {
		return fmt.Errorf("%s %s: %w", method, path, &apiError{code, string(b)})
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}
