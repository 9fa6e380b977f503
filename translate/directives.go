package translate

// Override bits (include/http_config.h): which AllowOverride category a
// directive needs in an .htaccess file.
const (
	OrLimit    uint16 = 1
	OrOptions  uint16 = 2
	OrFileInfo uint16 = 4
	OrAuthCfg  uint16 = 8
	OrIndexes  uint16 = 16
	OrUnset    uint16 = 32  // AllowOverride never set: .htaccess is read, nothing is allowed (2.4)
	accessConf uint16 = 64  // <Directory> context only: never in .htaccess
	rsrcConf   uint16 = 128 // server context only: never in .htaccess
	OrAll             = OrLimit | OrOptions | OrFileInfo | OrAuthCfg | OrIndexes
)

// directiveInfo is where a directive comes from and where it is allowed.
type directiveInfo struct {
	module   string // the module identifier, "" for core
	override uint16 // req_override
}

// directives lists the directives of the modules a stock Apache 2.4 ships
// that orderly meets in .htaccess files, with the module that provides
// each and its req_override, from each module's command table in httpd's
// source. A directive missing here is "Invalid command" in an .htaccess
// file: orderly answers 500 for it, failing closed.
var directives = map[string]directiveInfo{
	// core
	"acceptpathinfo": {"", OrFileInfo}, "adddefaultcharset": {"", OrFileInfo},
	"cgipassauth": {"", OrAuthCfg}, "contentdigest": {"", OrOptions},
	"defaulttype": {"", OrFileInfo}, "enablemmap": {"", OrFileInfo},
	"enablesendfile": {"", OrFileInfo}, "errordocument": {"", OrFileInfo},
	"fileetag": {"", OrFileInfo}, "forcetype": {"", OrFileInfo},
	"sethandler": {"", OrFileInfo}, "setinputfilter": {"", OrFileInfo},
	"setoutputfilter": {"", OrFileInfo}, "options": {"", OrOptions},
	"serversignature": {"", OrAll}, "limitrequestbody": {"", OrAll},
	"limitxmlrequestbody": {"", OrAll}, "rlimitcpu": {"", OrAll},
	"rlimitmem": {"", OrAll}, "rlimitnproc": {"", OrAll},
	"files": {"", OrAll}, "filesmatch": {"", OrAll}, "if": {"", OrAll},
	"elseif": {"", OrAll}, "else": {"", OrAll},
	"limit": {"", OrLimit | OrAuthCfg}, "limitexcept": {"", OrLimit | OrAuthCfg},
	"allowoverride": {"", accessConf}, "allowoverridelist": {"", accessConf},
	"directory": {"", rsrcConf}, "directorymatch": {"", rsrcConf},
	"location": {"", rsrcConf}, "locationmatch": {"", rsrcConf},
	"virtualhost": {"", rsrcConf}, "documentroot": {"", rsrcConf},
	"servername": {"", rsrcConf}, "serveradmin": {"", rsrcConf},
	"serveralias": {"", rsrcConf}, "serverroot": {"", rsrcConf},
	"listen": {"", rsrcConf}, "include": {"", rsrcConf | accessConf},
	"includeoptional": {"", rsrcConf | accessConf}, "loglevel": {"", rsrcConf | accessConf},
	"errorlog": {"", rsrcConf}, "hostnamelookups": {"", rsrcConf | accessConf},
	"usecanonicalname": {"", rsrcConf | accessConf}, "accessfilename": {"", rsrcConf},
	"mergeslashes": {"", rsrcConf}, "allowencodedslashes": {"", rsrcConf},
	"keepalive": {"", rsrcConf}, "timeout": {"", rsrcConf}, "define": {"", rsrcConf},
	"user": {"unixd_module", rsrcConf}, "group": {"unixd_module", rsrcConf},
	// mod_access_compat
	"order": {"access_compat_module", OrLimit}, "allow": {"access_compat_module", OrLimit},
	"deny": {"access_compat_module", OrLimit}, "satisfy": {"access_compat_module", OrAuthCfg},
	// mod_authz_core, mod_authn_core, mod_authn_file, mod_authz_groupfile, mod_auth_basic
	"require": {"authz_core_module", OrAuthCfg}, "requireall": {"authz_core_module", OrAuthCfg},
	"requireany": {"authz_core_module", OrAuthCfg}, "requirenone": {"authz_core_module", OrAuthCfg},
	"authmerging": {"authz_core_module", OrAuthCfg}, "authzsendforbiddenonfailure": {"authz_core_module", OrAuthCfg},
	"authtype": {"authn_core_module", OrAuthCfg}, "authname": {"authn_core_module", OrAuthCfg},
	"authuserfile": {"authn_file_module", OrAuthCfg}, "authgroupfile": {"authz_groupfile_module", OrAuthCfg},
	"authbasicprovider": {"auth_basic_module", OrAuthCfg}, "authbasicauthoritative": {"auth_basic_module", OrAuthCfg},
	"authbasicfake": {"auth_basic_module", OrAuthCfg}, "authbasicusedigestalgorithm": {"auth_basic_module", OrAuthCfg},
	// mod_setenvif, mod_env
	"setenvif": {"setenvif_module", OrFileInfo}, "setenvifnocase": {"setenvif_module", OrFileInfo},
	"browsermatch": {"setenvif_module", OrFileInfo}, "browsermatchnocase": {"setenvif_module", OrFileInfo},
	"setenvifexpr": {"setenvif_module", OrFileInfo},
	"setenv":       {"env_module", OrFileInfo}, "unsetenv": {"env_module", OrFileInfo}, "passenv": {"env_module", OrFileInfo},
	// mod_alias
	"alias": {"alias_module", rsrcConf | accessConf}, "scriptalias": {"alias_module", rsrcConf | accessConf},
	"aliasmatch": {"alias_module", rsrcConf}, "scriptaliasmatch": {"alias_module", rsrcConf},
	"redirect": {"alias_module", OrFileInfo}, "redirectmatch": {"alias_module", OrFileInfo},
	"redirecttemp": {"alias_module", OrFileInfo}, "redirectpermanent": {"alias_module", OrFileInfo},
	// mod_dir
	"directoryindex": {"dir_module", OrIndexes}, "directoryslash": {"dir_module", OrIndexes},
	"directorycheckhandler": {"dir_module", OrIndexes}, "directoryindexredirect": {"dir_module", OrIndexes},
	"fallbackresource": {"dir_module", OrFileInfo},
	// mod_mime
	"addtype": {"mime_module", OrFileInfo}, "addencoding": {"mime_module", OrFileInfo},
	"addcharset": {"mime_module", OrFileInfo}, "addlanguage": {"mime_module", OrFileInfo},
	"addhandler": {"mime_module", OrFileInfo}, "addinputfilter": {"mime_module", OrFileInfo},
	"addoutputfilter": {"mime_module", OrFileInfo}, "removetype": {"mime_module", OrFileInfo},
	"removehandler": {"mime_module", OrFileInfo}, "removeencoding": {"mime_module", OrFileInfo},
	"removecharset": {"mime_module", OrFileInfo}, "removelanguage": {"mime_module", OrFileInfo},
	"removeinputfilter": {"mime_module", OrFileInfo}, "removeoutputfilter": {"mime_module", OrFileInfo},
	"defaultlanguage": {"mime_module", OrFileInfo}, "multiviewsmatch": {"mime_module", OrFileInfo},
	"typesconfig": {"mime_module", rsrcConf},
	// mod_rewrite, mod_headers, mod_expires, mod_filter, mod_autoindex, mod_negotiation
	"rewriteengine": {"rewrite_module", OrFileInfo}, "rewriteoptions": {"rewrite_module", OrFileInfo},
	"rewritebase": {"rewrite_module", OrFileInfo}, "rewritecond": {"rewrite_module", OrFileInfo},
	"rewriterule": {"rewrite_module", OrFileInfo},
	"header":      {"headers_module", OrFileInfo}, "requestheader": {"headers_module", OrFileInfo},
	"expiresactive": {"expires_module", OrIndexes}, "expiresbytype": {"expires_module", OrIndexes},
	"expiresdefault":        {"expires_module", OrIndexes},
	"addoutputfilterbytype": {"filter_module", OrFileInfo},
	"indexoptions":          {"autoindex_module", OrIndexes}, "indexignore": {"autoindex_module", OrIndexes},
	"headername": {"autoindex_module", OrIndexes}, "readmename": {"autoindex_module", OrIndexes},
	"adddescription": {"autoindex_module", OrIndexes}, "addicon": {"autoindex_module", OrIndexes},
	"indexorderdefault": {"autoindex_module", OrIndexes}, "indexstylesheet": {"autoindex_module", OrIndexes},
	"languagepriority": {"negotiation_module", OrFileInfo}, "forcelanguagepriority": {"negotiation_module", OrFileInfo},
}
