package policy

import "strconv"

// MethodMask is a set of method numbers, one bit each, as Apache's
// cmd->limited: bit n stands for method number n. HEAD shares GET's bit.
type MethodMask uint64

// AllMethods is the mask in force outside any <Limit> section.
const AllMethods MethodMask = ^MethodMask(0)

// Method numbers of Apache httpd 2.4 (include/httpd.h). Methods a
// configuration names in <Limit> that Apache does not know are registered
// from MethodFirstCustom on, in configuration order.
const (
	MethodGet         = 0
	MethodInvalid     = 26
	MethodFirstCustom = 27
	MaxMethods        = 64
)

// builtinMethods is the registry of modules/http/http_protocol.c
// (ap_method_registry_init). Names are case-sensitive.
var builtinMethods = map[string]int{
	"GET": 0, "HEAD": 0, "PUT": 1, "POST": 2, "DELETE": 3, "CONNECT": 4,
	"OPTIONS": 5, "TRACE": 6, "PATCH": 7, "PROPFIND": 8, "PROPPATCH": 9,
	"MKCOL": 10, "COPY": 11, "MOVE": 12, "LOCK": 13, "UNLOCK": 14,
	"VERSION-CONTROL": 15, "CHECKOUT": 16, "UNCHECKOUT": 17, "CHECKIN": 18,
	"UPDATE": 19, "LABEL": 20, "REPORT": 21, "MKWORKSPACE": 22,
	"MKACTIVITY": 23, "BASELINE-CONTROL": 24, "MERGE": 25,
}

// Methods is the method registry of one configuration: Apache's built-in
// methods plus those registered by <Limit> sections. It is built at load
// time and read-only afterwards.
type Methods struct {
	custom map[string]int
	next   int
}

// Number returns the method number of name, or MethodInvalid when the
// method is neither built in nor registered (ap_method_number_of).
func (m *Methods) Number(name string) int {
	if n, ok := builtinMethods[name]; ok {
		return n
	}
	if m != nil {
		if n, ok := m.custom[name]; ok {
			return n
		}
	}
	return MethodInvalid
}

// Register returns the number of name, registering it when it is unknown
// (ap_method_register). It reports false when all 64 slots are taken.
func (m *Methods) Register(name string) (int, bool) {
	if n := m.Number(name); n != MethodInvalid {
		return n, true
	}
	if m.custom == nil {
		m.custom = map[string]int{}
		m.next = MethodFirstCustom
	}
	if m.next >= MaxMethods {
		return 0, false
	}
	n := m.next
	m.custom[name] = n
	m.next++
	return n, true
}

// MethodName returns a display name for a built-in method number.
func MethodName(n int) string {
	for k, v := range builtinMethods {
		if v == n && k != "HEAD" {
			return k
		}
	}
	return "method#" + strconv.Itoa(n)
}

// Name returns the name of method number n: a built-in method's, or one
// the configuration registered ("method#N" for neither).
func (m *Methods) Name(n int) string {
	if m != nil && n >= MethodFirstCustom {
		for k, v := range m.custom {
			if v == n {
				return k
			}
		}
	}
	return MethodName(n)
}

// Registered returns the methods a configuration registered, by number.
func (m *Methods) Registered() map[string]int {
	out := map[string]int{}
	if m != nil {
		for k, v := range m.custom {
			out[k] = v
		}
	}
	return out
}
