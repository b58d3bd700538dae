// benchlab's private certificate authority: the files of one CA directory and the three things
// done with them, `benchlab ca init`, `ca issue` and `ca revoke` (docs/security.md,
// "Certificates and roles"). Keys are ECDSA P-256, signatures SHA-256, all made by libcrypto.
//
// A CA directory holds:
//   ca.pem, ca.key           the CA's certificate and key (0600)
//   crl.pem                  the certificate revocation list, signed by the CA; daemons load it
//   NAME.pem, NAME.key       an issued certificate and its key (0600)
//   revoked/NAME-SERIAL.pem  a revoked certificate, kept for the record
// No file is ever overwritten: each is written beside its place and linked into it, so a
// second `ca init` or an `issue` of a name already issued fails and leaves the first intact.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "tls/certificate.h"

namespace benchlab {

struct CaPaths {
  explicit CaPaths(std::string dir);
  std::string dir, cert, key, crl, revoked;
  std::string Cert(const std::string& name) const;  // DIR/NAME.pem
  std::string Key(const std::string& name) const;   // DIR/NAME.key
};

// Makes DIR (0700) when missing and writes a new CA valid for `days` and an empty CRL.
// AlreadyExists when DIR already holds a CA key or certificate.
Result<CertificateInfo> InitCa(const std::string& dir, int days = 3650);

struct IssueRequest {
  std::string name;  // ValidCertificateName
  Role role = Role::kViewer;
  // DNS names or IP addresses the holder's daemon is dialled at (coordinator, agent); a client
  // checks the server's certificate against the host it dialled. Nothing is added unasked: a
  // daemon on loopback needs --host 127.0.0.1.
  std::vector<std::string> hosts;
  int days = 365;  // 1 to the CA's remaining days
};

// Issues NAME.pem and NAME.key in the CA directory. InvalidArgument naming the field for a bad
// name, host or days; AlreadyExists when NAME is already issued (revoke it first).
Result<CertificateInfo> IssueCertificate(const std::string& dir, const IssueRequest& request);

// The certificates of a target that serves HTTPS (`[[target]] tls = true`, docs/security.md,
// "Targets that serve HTTPS"): made anew in the window's run directory, apart from the fleet's CA.
//   tls_ca.pem    a private CA made for this one run directory; its key is never written
//   tls_cert.pem  the server certificate it signed, for localhost, 127.0.0.1 and `hosts`
//   tls_key.pem   that certificate's key (0600)
// Keys are ECDSA P-256; both certificates are valid for `days` (from five minutes ago).
struct TargetTlsFiles {
  explicit TargetTlsFiles(const std::string& dir);
  std::string ca, cert, key;  // DIR/tls_ca.pem, DIR/tls_cert.pem, DIR/tls_key.pem
};

// Writes the three files into DIR (which must exist) and returns the CA's certificate (PEM,
// public). `hosts` are DNS names or IP addresses added to the server certificate beside
// localhost and 127.0.0.1; InvalidArgument naming the host for anything else. AlreadyExists when
// one of the files is there already: none is overwritten.
Result<std::string> MakeTargetTls(const std::string& dir, const std::vector<std::string>& hosts,
                                  int days = 2);

// Adds NAME's certificate to the CRL (written anew, signed), moves NAME.pem to revoked/ and
// deletes NAME.key. NotFound when NAME has no certificate in the directory.
Result<CertificateInfo> RevokeCertificate(const std::string& dir, const std::string& name);

}  // namespace benchlab
