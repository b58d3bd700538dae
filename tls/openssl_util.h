// Owning pointers for OpenSSL's objects and the text of its error queue, for tls/*.cc alone.
#pragma once

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace benchlab::tls_detail {

template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};

using BioPtr = std::unique_ptr<BIO, Deleter<BIO_free_all>>;
using BnPtr = std::unique_ptr<BIGNUM, Deleter<BN_free>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509_free>>;
using CrlPtr = std::unique_ptr<X509_CRL, Deleter<X509_CRL_free>>;
using ExtPtr = std::unique_ptr<X509_EXTENSION, Deleter<X509_EXTENSION_free>>;
using RevokedPtr = std::unique_ptr<X509_REVOKED, Deleter<X509_REVOKED_free>>;
using TimePtr = std::unique_ptr<ASN1_TIME, Deleter<ASN1_TIME_free>>;
using StorePtr = std::unique_ptr<X509_STORE, Deleter<X509_STORE_free>>;
using StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, Deleter<X509_STORE_CTX_free>>;
using GeneralNamesPtr = std::unique_ptr<GENERAL_NAMES, Deleter<GENERAL_NAMES_free>>;

// OpenSSL's queued errors joined with "; ", and the queue cleared; "" when it holds none.
std::string OpensslErrorQueue();

// `what` followed by OpenSSL's queued errors (which are cleared): "signing: error:...".
Status OpensslError(std::string_view what);

// A read-only memory BIO over `text` (which must outlive it).
BioPtr MemoryBio(std::string_view text);

// Everything written to a memory BIO.
std::string BioText(BIO* bio);

// A serial number as upper-case hexadecimal ("0" for none).
std::string SerialHex(const ASN1_INTEGER* serial);

// One line, RFC 2253.
std::string NameLine(const X509_NAME* name);

}  // namespace benchlab::tls_detail
