package differential

import (
	"strings"
	"testing"

	"github.com/orderly-proxy/orderly/internal/apachetest"
	"github.com/orderly-proxy/orderly/translate"
	"github.com/orderly-proxy/orderly/translate/convert"
)

// TestTranslateStock22 checks what orderly translate writes for a whole
// 2.2 httpd.conf in the style of the stock one: catalogue renames and
// removals, modules gone in 2.4 and those 2.4 needs, the defaults 2.4
// changed, the access rules. Apache's verdict on the result (apache2 -t,
// and the replay) is TestUpgradeConfigs'.
func TestTranslateStock22(t *testing.T) {
	apachetest.Require(t)
	st := materializeUpgrade(t, upgradeFixtures[0], "../../testdata/upgrade/stock22")
	conf := st.top()
	conv, err := convert.Convert([]string{conf}, convert.Options{LoadOptions: translate.LoadOptions{
		Options: translate.Options{Semantics: translate.Legacy22, ForwardUnfaithful: true}}})
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, b := range conv.Files {
		all.Write(b)
	}
	text := all.String()
	for _, want := range []string{
		"MaxRequestWorkers 150", "MaxConnectionsPerChild 0", "# orderly DIR-08", "# orderly DIR-03", "# orderly DIR-09",
		"KeepAlive On", "# orderly BLD-02", "LoadModule authn_core_module", "Require all denied", "Require all granted",
		"Require ip 127.0.0.1/32 10.0.0.0/8", "EnableSendfile On", "FileETag INode MTime Size",
		"LoadModule lbmethod_byrequests_module", "LoadModule slotmem_shm_module", "LoadModule socache_shmcb_module",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("translation lacks %q", want)
		}
	}
	if n := strings.Count(text, "LoadModule authz_core_module"); n != 1 {
		t.Errorf("authz_core_module loaded %d times, want once", n)
	}
}
