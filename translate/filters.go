package translate

import (
	"strings"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
	"github.com/orderly-proxy/orderly/translate/directive"
)

// outputFilters are the output filters each module Apache 2.4 ships
// registers as it is loaded (ap_register_output_filter in its
// register_hooks), in lower case: the providers that mod_filter's
// AddOutputFilterByType finds (ap_get_output_filter_handle, which
// ignores case). The test holds the list to Debian's apache2
// (TestValuesMatchApache24).
var outputFilters = map[string][]string{
	"core_module":         {"content_length", "core", "subreq_core", "old_write"},
	"http_module":         {"http_header", "chunk", "http_outerror", "byterange"},
	"brotli_module":       {"brotli_compress"},
	"buffer_module":       {"buffer"},
	"cache_module":        {"cache", "cache_save", "cache_save_subreq", "cache_out", "cache_out_subreq", "cache_remove_url", "cache_invalidate"},
	"charset_lite_module": {"xlateout"},
	"data_module":         {"data"},
	"deflate_module":      {"deflate", "inflate"},
	"dumpio_module":       {"dumpio_out"},
	"expires_module":      {"mod_expires"},
	"headers_module":      {"fixup_headers_out", "fixup_headers_err"},
	"http2_module":        {"h2_c2_net_catch_h1", "h2_c2_net_out", "h2_c2_response_out", "h2_c2_trailers_out", "h2_c2_ws_out"},
	"include_module":      {"includes"},
	"logio_module":        {"logio_ttfb_out"},
	"proxy_ftp_module":    {"proxy_send_dir"},
	"proxy_html_module":   {"proxy-html"},
	"ratelimit_module":    {"rate_limit"},
	"reqtimeout_module":   {"reqtimeout"},
	"sed_module":          {"sed"},
	"session_module":      {"mod_session_out"},
	"ssl_module":          {"ssl/tls filter", "ssl/tls coalescing filter"},
	"substitute_module":   {"substitute"},
	"xml2enc_module":      {"xml2enc"},
}

// filterProviders reports Apache 2.4's error for mod_filter's
// AddOutputFilterByType d (modules/filters/mod_filter.c filter_bytype, a
// TAKE_ARGV directive): fewer than two arguments, or a provider of its
// first (names joined by ';') that no loaded module registers; "" where
// there is none. ExtFilterDefine and LuaOutputFilter register filters of
// the configuration's own names while it is read: where their module is
// loaded, a name orderly does not know is let through.
func (b *builder) filterProviders(info *directive.Info, d *apacheconf.Directive) string {
	if info.Module != "filter_module" || info.Name != "AddOutputFilterByType" {
		return ""
	}
	// invoke_cmd's TAKE_ARGV does not count an empty last word.
	argc := len(d.Args)
	if argc > 0 && d.Args[argc-1] == "" {
		argc--
	}
	if argc < 2 {
		return "AddOutputFilterByType requires at least two arguments"
	}
	if b.loaded("ext_filter_module") || b.loaded("lua_module") {
		return ""
	}
	for _, p := range strings.Split(d.Args[0], ";") { // apr_strtok: no empty tokens
		if p != "" && !b.outputFilter(p) {
			return "Unknown filter provider " + p
		}
	}
	return ""
}

// outputFilter reports whether a loaded module registers the output
// filter name.
func (b *builder) outputFilter(name string) bool {
	lower := make([]byte, len(name))
	for i := range len(name) {
		lower[i] = lowerASCII(name[i])
	}
	for m, names := range outputFilters {
		if !b.loaded(m) && m != "core_module" && m != "http_module" {
			continue
		}
		for _, n := range names {
			if n == string(lower) {
				return true
			}
		}
	}
	return false
}
