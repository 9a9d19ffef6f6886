// libzip: reads the Health app's export.zip entry by entry, and writes the demo export.
#include <zip.h>
