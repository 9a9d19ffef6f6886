#ifndef CMICROHTTPD_H
#define CMICROHTTPD_H

// Swift-callable shims over libmicrohttpd: what Swift cannot import directly
// (variadic functions such as MHD_start_daemon and MHD_get_*_info) gets a
// prefixed, fixed-arity function here. Everything else is used from
// <microhttpd.h> as is.

#include <stddef.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// Starts a daemon with the options HTTPServer uses.
///
/// Options passed: MHD_OPTION_EXTERNAL_LOGGER (MHD's messages go to stderr,
/// control characters replaced by '?', and the last one is remembered per
/// thread, see CMicroHTTPD_last_error), MHD_OPTION_SOCK_ADDR,
/// MHD_OPTION_CONNECTION_LIMIT, MHD_OPTION_PER_IP_CONNECTION_LIMIT (0: none),
/// MHD_OPTION_CONNECTION_TIMEOUT, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
/// MHD_OPTION_NOTIFY_COMPLETED, MHD_OPTION_NOTIFY_CONNECTION and
/// MHD_OPTION_UNESCAPE_CALLBACK (identity: the URL path is handed over as
/// sent, not percent-decoded). With `tls_priorities` and `tls_certificate_callback` (a
/// gnutls_certificate_retrieve_function2, CGnuTLS_certificate_callback) both non-NULL, and
/// MHD_USE_TLS in `flags`, also MHD_OPTION_HTTPS_PRIORITIES and MHD_OPTION_HTTPS_CERT_CALLBACK:
/// each handshake asks the callback for the pair, so a reloaded one serves the next connection.
///
/// On failure returns NULL, stores `errno` as it was right after
/// MHD_start_daemon returned in `*error_number` (when not NULL), and
/// CMicroHTTPD_last_error() holds MHD's last message on this thread.
struct MHD_Daemon *CMicroHTTPD_start_daemon(unsigned int flags,
                                            const struct sockaddr *bind_addr,
                                            MHD_AccessHandlerCallback handler,
                                            void *handler_cls,
                                            MHD_RequestCompletedCallback completed,
                                            void *completed_cls,
                                            MHD_NotifyConnectionCallback notify_connection,
                                            void *notify_connection_cls,
                                            unsigned int connection_limit,
                                            unsigned int per_ip_connection_limit,
                                            unsigned int connection_timeout_s,
                                            size_t connection_memory_limit,
                                            const char *tls_priorities,
                                            void *tls_certificate_callback,
                                            int *error_number);

/// 1 when this libmicrohttpd was built with TLS and the certificate callback
/// (MHD_FEATURE_TLS, MHD_FEATURE_HTTPS_CERT_CALLBACK), else 0.
int CMicroHTTPD_supports_tls(void);

/// The last message MHD logged on the calling thread ("" when none).
const char *CMicroHTTPD_last_error(void);

/// Forgets the calling thread's last MHD message.
void CMicroHTTPD_clear_last_error(void);

/// The port of the daemon's listening socket (the real one when 0 was asked),
/// or -1 when MHD cannot tell. Wraps variadic MHD_get_daemon_info.
int CMicroHTTPD_bound_port(struct MHD_Daemon *daemon);

/// Writes the client's IP address as text ("127.0.0.1", "::1"; an
/// IPv4-mapped IPv6 address is written in its IPv4 form) into `buffer`.
/// Returns 0 on success, -1 when unknown. Wraps variadic
/// MHD_get_connection_info.
int CMicroHTTPD_client_address(struct MHD_Connection *connection,
                               char *buffer, size_t buffer_size);

/// The socket of a connection, or -1 when MHD cannot tell. Wraps variadic
/// MHD_get_connection_info.
int CMicroHTTPD_connection_socket(struct MHD_Connection *connection);

/// The server's memory, which Swift cannot reach (glibc's <malloc.h> is not in its Glibc
/// module). Makes every allocation of at least `bytes` a mapping of its own, returned to the
/// system when freed: mallopt(M_MMAP_THRESHOLD), which also stops glibc from raising that
/// threshold after each large free (its default: a freed 30 MiB body would make every later
/// buffer up to 32 MiB come from the heap and stay there). Returns 1 on success.
int CMicroHTTPD_map_allocations_from(size_t bytes);

/// Returns the free memory of every malloc arena to the system (glibc malloc_trim(0)).
/// Returns 1 when some was released.
int CMicroHTTPD_trim_memory(void);

#endif
