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

// A TLS client over a connected socket, for tests and benchmarks that speak HTTPS to `serve`
// with their own sockets: the server's certificate is verified against `ca_file` for
// `server_name` (a name or a numeric address in its subjectAltName).

/// Handshakes on `fd` (blocking) with `priorities` (NULL: GnuTLS' "NORMAL"). Returns the
/// session, or NULL with the reason in `detail`.
void *CGnuTLS_client_open(int fd, const char *ca_file, const char *server_name, const char *priorities,
                          char *detail, size_t detail_size);

/// gnutls_record_send: bytes sent, or a negative GnuTLS error.
long CGnuTLS_client_send(void *session, const void *bytes, size_t count);

/// gnutls_record_recv: bytes read, 0 at the peer's close, or a negative GnuTLS error
/// (GNUTLS_E_AGAIN, -28, when nothing is there without blocking).
long CGnuTLS_client_recv(void *session, void *bytes, size_t count);

/// Decrypted bytes waiting in the session (read them before polling the socket).
size_t CGnuTLS_client_pending(void *session);

/// The negotiated protocol ("TLS1.3") of a session.
const char *CGnuTLS_client_protocol(void *session);

/// Sends close_notify (without waiting) and frees the session; the socket stays open.
void CGnuTLS_client_close(void *session);

#endif
