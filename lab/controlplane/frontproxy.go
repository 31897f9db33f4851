package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// frontProxyClient is the common name of the client certificate kube-apiserver's aggregator
// presents to an aggregated apiserver; the aggregated server accepts the user it names in
// X-Remote-User only from a certificate of that name (--requestheader-allowed-names).
const frontProxyClient = "front-proxy-client"

// frontProxy makes kube-apiserver an aggregator that can forward to aggregated apiservers (as
// kubeadm's clusters are): a CA of its own for the front proxy, the client certificate it signs
// for kube-apiserver, and the requestheader flags. kube-apiserver publishes that CA and the
// header names in kube-system/extension-apiserver-authentication, where an aggregated apiserver
// with delegated authentication reads them. The files go into dir (the certificates' directory,
// removed with the control plane).
func frontProxy(api *envtest.APIServer, dir string) error {
	ca, caDER, caKey, err := newCert("informer-lab front-proxy CA", nil, nil)
	if err != nil {
		return err
	}
	_, der, key, err := newCert(frontProxyClient, ca, caKey)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"front-proxy-ca.crt":     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		"front-proxy-client.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		"front-proxy-client.key": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return fmt.Errorf("front proxy: %w", err)
		}
	}
	args := api.Configure()
	args.Set("requestheader-client-ca-file", filepath.Join(dir, "front-proxy-ca.crt"))
	args.Set("requestheader-allowed-names", frontProxyClient)
	args.Set("requestheader-username-headers", "X-Remote-User")
	args.Set("requestheader-group-headers", "X-Remote-Group")
	args.Set("requestheader-extra-headers-prefix", "X-Remote-Extra-")
	args.Set("proxy-client-cert-file", filepath.Join(dir, "front-proxy-client.crt"))
	args.Set("proxy-client-key-file", filepath.Join(dir, "front-proxy-client.key"))
	return nil
}

// newCert makes a key and a certificate for it, valid for a week: a CA signed by itself when ca
// is nil, else a client certificate that ca signs.
func newCert(name string, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (*x509.Certificate, []byte, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(now.UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(7 * 24 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if ca == nil {
		tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.ExtKeyUsage = true, true, nil
		tmpl.KeyUsage |= x509.KeyUsageCertSign
		ca, caKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("front proxy certificate %s: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	return cert, der, key, err
}
