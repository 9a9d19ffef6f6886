#ifndef CGNUTLS_H
#define CGNUTLS_H

// A certificate and key pair for libmicrohttpd's TLS (GnuTLS), loaded from PEM files, checked
// (readable, key matching the certificate, inside its validity), and served to each new
// handshake through MHD_OPTION_HTTPS_CERT_CALLBACK so SIGHUP can swap the pair while
// connections in flight keep theirs.

#include <stddef.h>

/// Why a pair was refused (CGnuTLS_load's result).
enum CGnuTLS_problem {
    CGNUTLS_OK = 0,
    CGNUTLS_CERT_UNREADABLE = 1,
    CGNUTLS_KEY_UNREADABLE = 2,
    CGNUTLS_CERT_INVALID = 3,
    CGNUTLS_KEY_INVALID = 4,
    CGNUTLS_MISMATCH = 5,
    CGNUTLS_EXPIRED = 6,
    CGNUTLS_NOT_YET_VALID = 7,
};

/// Reads and checks the pair in `cert_path` (a PEM chain, the server's certificate first) and
/// `key_path` (a PEM private key) at time `now` (seconds since the epoch). On success makes it
/// the pair every later handshake is given and returns CGNUTLS_OK; otherwise the pair served
/// before stays and `detail` holds GnuTLS' or the system's reason. A replaced pair is never
/// freed: a handshake that started with it may still hold it (a few kilobytes a reload).
int CGnuTLS_load(const char *cert_path, const char *key_path, long long now,
                 char *detail, size_t detail_size);

/// The certificate's expiry (seconds since the epoch) of the pair served now; 0 when none.
long long CGnuTLS_current_expiry(void);

/// The gnutls_certificate_retrieve_function2 handing out the current pair, as a pointer to
/// pass to MHD_OPTION_HTTPS_CERT_CALLBACK.
void *CGnuTLS_certificate_callback(void);

/// GnuTLS' priority string for the receiver: TLS 1.2 and 1.3 only, ECDHE key exchange (forward
/// secrecy) with AEAD ciphers (what iOS App Transport Security asks).
extern const char *const CGnuTLS_priorities;

#endif
