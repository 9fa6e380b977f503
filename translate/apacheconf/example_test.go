package apacheconf_test

import (
	"fmt"
	"strings"

	"github.com/orderly-proxy/orderly/translate/apacheconf"
)

func ExampleParse() {
	src := `# Legacy access rules
<Directory "/var/www/private">
    Order deny,allow
    Deny from all
    Allow from 10.1 \
               192.168
</Directory>
`
	ds, err := apacheconf.Parse("httpd.conf", []byte(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	apacheconf.Walk(ds, func(d *apacheconf.Directive, parents []*apacheconf.Directive) error {
		fmt.Printf("%s: %s%s %q\n", d.Pos, strings.Repeat("  ", len(parents)), d.Name, d.Args)
		return nil
	})
	// Output:
	// httpd.conf:2: Directory ["/var/www/private"]
	// httpd.conf:3:   Order ["deny,allow"]
	// httpd.conf:4:   Deny ["from" "all"]
	// httpd.conf:5:   Allow ["from" "10.1" "192.168"]
}

func ExampleParse_errors() {
	src := "<Directory /srv>\n    Require all granted\n</Location>\n"
	_, err := apacheconf.Parse("site.conf", []byte(src))
	fmt.Println(err)
	// Output:
	// site.conf:1: <Directory> was not closed.
	// site.conf:3: Expected </Directory> but saw </Location>
}

func ExampleLoad() {
	ds, err := apacheconf.Load("testdata/load/httpd.conf", apacheconf.Options{
		Defines: map[string]bool{"SSL": true},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range ds[:5] {
		fmt.Printf("%s %s %q, included from %v\n", d.Pos, d.Name, d.Args, d.Trail)
	}
	// Output:
	// testdata/load/httpd.conf:2 LoadModule ["rewrite_module" "modules/mod_rewrite.so"], included from []
	// testdata/load/conf.d/a.conf:1 FromA ["1"], included from [testdata/load/httpd.conf:3]
	// testdata/load/conf.d/b.conf:2 FromB ["1"], included from [testdata/load/httpd.conf:3]
	// testdata/load/inner/x.conf:1 Inner ["x y"], included from [testdata/load/httpd.conf:3 testdata/load/conf.d/b.conf:3]
	// testdata/load/conf.d/b.conf:4 FromB ["2"], included from [testdata/load/httpd.conf:3]
}

func ExampleRender() {
	ds, _ := apacheconf.Parse("x.conf", []byte(`<Files   'my file.txt'>`+"\n"+`Header set X-Note "say \"hi\""`+"\n</Files>\n"))
	fmt.Print(apacheconf.Render(ds))
	// Output:
	// <Files "my file.txt">
	//     Header set X-Note 'say "hi"'
	// </Files>
}

func ExampleLoad_preprocessing() {
	conf := `LoadModule macro_module modules/mod_macro.so
Define NET "10.0.0.0/8 192.168.0.0/16"
<Macro Private $dir>
    <Directory $dir>
        Require ip ${NET}
    </Directory>
</Macro>
<IfVersion >= 2.4>
    Use Private /srv/intranet
</IfVersion>
ErrorLog ${APACHE_LOG_DIR}/error.log
`
	ds, err := apacheconf.Load("/etc/apache2/apache2.conf", apacheconf.Options{
		Version:  "2.4.71",
		ReadFile: func(string) ([]byte, error) { return []byte(conf), nil },
		Getenv:   func(string) (string, bool) { return "", false }, // an empty environment
		Warn:     func(e *apacheconf.Error) { fmt.Println("warning:", e) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	apacheconf.Walk(ds, func(d *apacheconf.Directive, parents []*apacheconf.Directive) error {
		fmt.Printf("%s: %s%s %q, used at %v\n", d.Pos, strings.Repeat("  ", len(parents)), d.Name, d.Args, d.Trail)
		return nil
	})
	// Output:
	// warning: /etc/apache2/apache2.conf:11: AH00111: Config variable ${APACHE_LOG_DIR} is not defined
	// /etc/apache2/apache2.conf:1: LoadModule ["macro_module" "modules/mod_macro.so"], used at []
	// /etc/apache2/apache2.conf:2: Define ["NET" "10.0.0.0/8 192.168.0.0/16"], used at []
	// /etc/apache2/apache2.conf:4: Directory ["/srv/intranet"], used at [/etc/apache2/apache2.conf:9]
	// /etc/apache2/apache2.conf:5:   Require ["ip" "10.0.0.0/8" "192.168.0.0/16"], used at [/etc/apache2/apache2.conf:9]
	// /etc/apache2/apache2.conf:11: ErrorLog ["${APACHE_LOG_DIR}/error.log"], used at []
}
