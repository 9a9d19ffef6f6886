#include "CMicroHTTPD.h"

#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

// MHD logs through this when MHD_USE_ERROR_LOG is set. Messages go to stderr
// like MHD's default logger does; the last one is also kept per thread so a
// failed MHD_start_daemon (which logs on the caller's thread) can be reported
// with MHD's own reason ("Failed to bind to port 8080: Address already in use").
static _Thread_local char cmhd_last_error[512];

static void cmhd_log(void *cls, const char *format, va_list ap) {
    (void)cls;
    char line[512];
    int written = vsnprintf(line, sizeof line, format, ap);
    if (written < 0) {
        return;
    }
    size_t length = strlen(line);
    while (length > 0 && (line[length - 1] == '\n' || line[length - 1] == '\r')) {
        line[--length] = '\0';
    }
    // A message may quote what a client sent: control characters must not reach the log
    // as they are (a raw newline would forge a line).
    for (size_t i = 0; i < length; i++) {
        unsigned char c = (unsigned char)line[i];
        if (c < 0x20 || c == 0x7f) {
            line[i] = '?';
        }
    }
    memcpy(cmhd_last_error, line, length + 1);
    fprintf(stderr, "microhttpd: %s\n", line);
}

// Identity unescaper: HTTPRequest.path is the path as sent, so MHD's default
// %HH decoding (MHD_OPTION_UNESCAPE_CALLBACK docs) is switched off.
static size_t cmhd_unescape_identity(void *cls, struct MHD_Connection *connection, char *s) {
    (void)cls;
    (void)connection;
    return strlen(s);
}

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
                                            int *error_number) {
    uint16_t port = 0;
    if (bind_addr != NULL && bind_addr->sa_family == AF_INET) {
        port = ntohs(((const struct sockaddr_in *)bind_addr)->sin_port);
    } else if (bind_addr != NULL && bind_addr->sa_family == AF_INET6) {
        port = ntohs(((const struct sockaddr_in6 *)bind_addr)->sin6_port);
    }
    cmhd_last_error[0] = '\0';
    errno = 0;
    // The same options with or without TLS; MHD_USE_TLS in `flags` goes with the TLS ones.
#define CMHD_COMMON_OPTIONS \
        /* The logger must come first, or MHD prints a warning with its default \
           logger and may use that one for early messages. */ \
        MHD_OPTION_EXTERNAL_LOGGER, cmhd_log, NULL, \
        MHD_OPTION_SOCK_ADDR, bind_addr, \
        MHD_OPTION_CONNECTION_LIMIT, connection_limit, \
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_connection_limit, \
        MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout_s, \
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, connection_memory_limit, \
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls, \
        MHD_OPTION_NOTIFY_CONNECTION, notify_connection, notify_connection_cls, \
        MHD_OPTION_UNESCAPE_CALLBACK, cmhd_unescape_identity, NULL
    struct MHD_Daemon *daemon;
    if (tls_priorities != NULL && tls_certificate_callback != NULL) {
        daemon = MHD_start_daemon(flags, port, NULL, NULL, handler, handler_cls, CMHD_COMMON_OPTIONS,
                                  MHD_OPTION_HTTPS_PRIORITIES, tls_priorities,
                                  MHD_OPTION_HTTPS_CERT_CALLBACK, tls_certificate_callback,
                                  MHD_OPTION_END);
    } else {
        daemon = MHD_start_daemon(flags, port, NULL, NULL, handler, handler_cls, CMHD_COMMON_OPTIONS, MHD_OPTION_END);
    }
#undef CMHD_COMMON_OPTIONS
    int saved = errno;
    if (error_number != NULL) {
        *error_number = daemon == NULL ? saved : 0;
    }
    return daemon;
}

int CMicroHTTPD_supports_tls(void) {
    return MHD_is_feature_supported(MHD_FEATURE_TLS) == MHD_YES
        && MHD_is_feature_supported(MHD_FEATURE_HTTPS_CERT_CALLBACK) == MHD_YES;
}

const char *CMicroHTTPD_last_error(void) {
    return cmhd_last_error;
}

void CMicroHTTPD_clear_last_error(void) {
    cmhd_last_error[0] = '\0';
}

int CMicroHTTPD_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    if (info == NULL) {
        return -1;
    }
    return (int)info->port;
}

int CMicroHTTPD_client_address(struct MHD_Connection *connection,
                               char *buffer, size_t buffer_size) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL || buffer == NULL || buffer_size == 0) {
        return -1;
    }
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)address;
        return inet_ntop(AF_INET, &v4->sin_addr, buffer, (socklen_t)buffer_size) ? 0 : -1;
    }
    if (address->sa_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)address;
        if (IN6_IS_ADDR_V4MAPPED(&v6->sin6_addr)) {
            return inet_ntop(AF_INET, &v6->sin6_addr.s6_addr[12], buffer, (socklen_t)buffer_size) ? 0 : -1;
        }
        return inet_ntop(AF_INET6, &v6->sin6_addr, buffer, (socklen_t)buffer_size) ? 0 : -1;
    }
    return -1;
}

int CMicroHTTPD_connection_socket(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (info == NULL) {
        return -1;
    }
    return (int)info->connect_fd;
}

int CMicroHTTPD_map_allocations_from(size_t bytes) {
#ifdef M_MMAP_THRESHOLD
    return mallopt(M_MMAP_THRESHOLD, (int) bytes);
#else
    (void) bytes;
    return 0;
#endif
}

int CMicroHTTPD_trim_memory(void) {
#ifdef __GLIBC__
    return malloc_trim(0);
#else
    return 0;
#endif
}
