// libxml2's SAX2 push parser (the Apple Health export reader, Sources/AppleExport).
#include <libxml/xmlversion.h>
// Debian's libxml2 is built with ICU, and libxml/encoding.h then includes ICU's headers, which
// clash with the copy Foundation carries (_FoundationICU). Nothing here touches the ICU
// members of xmlCharEncodingHandler (only pointers to it pass by), so ICU stays out.
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>
