// libyaml (Debian's libyaml-dev), for the tests that read compose.yaml and the Grafana
// provisioning files with a real YAML parser.
#include <yaml.h>
