package sandbox

import (
	"maps"
	"slices"
	"strings"

	"github.com/dbarena/dbarena/internal/server/target"
)

// Unsafe settings: server settings that run code, load plugins or
// libraries, open listeners or read and write files outside the sandbox.
// A sandbox refuses them unless its Spec says AllowUnsafe (--set with
// --allow-unsafe-set, a plan with allow_unsafe_settings: true): whoever may
// set them gets the server's OS account, and the network reach of its
// listeners. There is one list per flavor family; names are matched case
// insensitively, '-' and '_' alike, without MySQL's loose-/maximum- option
// prefixes (and for boolean options its skip-/enable-/disable- ones).

// unsafeKind says what makes a setting unsafe.
type unsafeKind int

const (
	// always: unsafe whatever its value.
	always unsafeKind = iota
	// pathOutside: a file or directory name, unsafe only when it leaves the
	// data directory (absolute, "~" or a ".." element); a relative name
	// stays under the data directory (or basedir) and is a fair benchmark knob.
	pathOutside
)

// unsafeRule is one unsafe setting: the kind and why, as a phrase that
// completes "setting X ...".
type unsafeRule struct {
	kind unsafeKind
	why  string
}

const (
	whyCode     = "runs commands or SQL as the server"
	whyLibrary  = "loads plugins or libraries into the server"
	whyListener = "opens a network listener"
	whyFiles    = "reads or writes files outside the sandbox"
	whyAuth     = "turns off password checks"
)

// mysqlUnsafe lists the MySQL family's (MariaDB, MySQL, Percona) unsafe
// settings. Left out on purpose: init_connect (SQL run with the privileges
// of each connecting non-SUPER client, no more than the client has),
// local_infile (lets the server ask a client for the client's files: the
// risk is the client's), symbolic_links (DATA DIRECTORY needs the FILE
// privilege), skip_networking (only makes the sandbox unreachable), ssl_*
// (files the server reads as keys and certificates, never shows),
// plugin_maturity (loading a plugin still needs plugin_load or INSTALL
// PLUGIN), proxy_protocol_networks, report_host/report_port (labels only).
var mysqlUnsafe = map[string]unsafeRule{
	// SQL or commands run by the server itself.
	"init_file":        {always, whyCode + " (SQL as root at start-up)"},
	"init_slave":       {always, whyCode + " (SQL in the replication thread)"},
	"init_replica":     {always, whyCode + " (SQL in the replication thread)"},
	"wsrep_notify_cmd": {always, whyCode},
	"wsrep_sst_method": {always, whyCode + " (a wsrep_sst_ script)"},
	// Libraries and plugins.
	"plugin_load":       {always, whyLibrary},
	"plugin_load_add":   {always, whyLibrary},
	"plugin_dir":        {always, whyLibrary + " (from another directory)"},
	"early_plugin_load": {always, whyLibrary},
	"malloc_lib":        {always, whyLibrary},
	"wsrep_provider":    {always, whyLibrary},
	"mysqlx":            {always, whyLibrary + " (the X plugin, with its listener)"},
	"ledir":             {always, whyCode + " (mysqld_safe runs the server from there)"},
	"mysqld":            {always, whyCode + " (mysqld_safe runs that binary)"},
	// Listeners (the sandbox listens on 127.0.0.1 only).
	"bind_address":                 {always, whyListener + " (sandboxes listen on 127.0.0.1 only)"},
	"admin_address":                {always, whyListener},
	"admin_port":                   {always, whyListener},
	"create_admin_listener_thread": {always, whyListener},
	"extra_port":                   {always, whyListener},
	"mysqlx_bind_address":          {always, whyListener},
	"mysqlx_port":                  {always, whyListener},
	"mysqlx_socket":                {always, whyListener},
	"wsrep_cluster_address":        {always, whyListener + " (and connects to a cluster)"},
	"wsrep_node_address":           {always, whyListener},
	"wsrep_node_incoming_address":  {always, whyListener},
	"wsrep_sst_receive_address":    {always, whyListener},
	"wsrep_on":                     {always, whyListener + " (Galera replication)"},
	// Authentication.
	"skip_grant_tables": {always, whyAuth},
	// Files: the FILE privilege's scope and server paths.
	"secure_file_priv":            {always, whyFiles + " (the sandbox confines LOAD_FILE and INTO OUTFILE)"},
	"tmpdir":                      {always, whyFiles + " (the sandbox owns its temporary directory)"},
	"chroot":                      {always, whyFiles},
	"defaults_file":               {always, whyFiles + " (reads another option file)"},
	"defaults_extra_file":         {always, whyFiles + " (reads another option file)"},
	"debug":                       {always, whyFiles + " (a debug trace file)"},
	"debug_dbug":                  {always, whyFiles + " (a debug trace file)"},
	"general_log_file":            {pathOutside, whyFiles},
	"slow_query_log_file":         {pathOutside, whyFiles},
	"log_slow_query_file":         {pathOutside, whyFiles},
	"log_bin":                     {pathOutside, whyFiles},
	"log_bin_index":               {pathOutside, whyFiles},
	"log_bin_basename":            {pathOutside, whyFiles},
	"relay_log":                   {pathOutside, whyFiles},
	"relay_log_index":             {pathOutside, whyFiles},
	"relay_log_info_file":         {pathOutside, whyFiles},
	"master_info_file":            {pathOutside, whyFiles},
	"log_tc":                      {pathOutside, whyFiles},
	"log_isam":                    {pathOutside, whyFiles},
	"log_ddl_recovery":            {pathOutside, whyFiles},
	"slave_load_tmpdir":           {pathOutside, whyFiles},
	"replica_load_tmpdir":         {pathOutside, whyFiles},
	"character_sets_dir":          {pathOutside, whyFiles},
	"lc_messages_dir":             {pathOutside, whyFiles},
	"language":                    {pathOutside, whyFiles},
	"ft_stopword_file":            {pathOutside, whyFiles},
	"des_key_file":                {pathOutside, whyFiles},
	"aria_log_dir_path":           {pathOutside, whyFiles},
	"server_audit_file_path":      {pathOutside, whyFiles},
	"innodb_data_home_dir":        {pathOutside, whyFiles},
	"innodb_data_file_path":       {pathOutside, whyFiles},
	"innodb_log_group_home_dir":   {pathOutside, whyFiles},
	"innodb_undo_directory":       {pathOutside, whyFiles},
	"innodb_tmpdir":               {pathOutside, whyFiles},
	"innodb_temp_data_file_path":  {pathOutside, whyFiles},
	"innodb_buffer_pool_filename": {pathOutside, whyFiles},
	"innodb_doublewrite_dir":      {pathOutside, whyFiles},
	"innodb_directories":          {pathOutside, whyFiles},
}

// mysqlUnsafePrefixes are families of unsafe MySQL-family settings: the X
// protocol plugin's (its own listener) and Galera's (listeners, a provider
// library, state-transfer scripts).
var mysqlUnsafePrefixes = map[string]unsafeRule{
	"mysqlx_": {always, whyListener + " (the X protocol)"},
	"wsrep_":  {always, whyListener + " (Galera replication)"},
}

// postgresUnsafe lists PostgreSQL's unsafe settings. Left out on purpose:
// primary_conninfo (an outgoing replication connection, used only by a
// standby), allow_system_table_mods and lo_compat_privileges (superuser or
// object-level matters inside the server), ssl_*_file (files the server
// reads as keys and certificates, never shows), log_destination and
// logging_collector (where logs go stays log_directory's business).
var postgresUnsafe = map[string]unsafeRule{
	// Shell commands the server runs.
	"archive_command":         {always, whyCode},
	"restore_command":         {always, whyCode},
	"archive_cleanup_command": {always, whyCode},
	"recovery_end_command":    {always, whyCode},
	"ssl_passphrase_command":  {always, whyCode},
	// Libraries.
	"archive_library":           {always, whyLibrary},
	"shared_preload_libraries":  {always, whyLibrary},
	"local_preload_libraries":   {always, whyLibrary},
	"session_preload_libraries": {always, whyLibrary},
	"dynamic_library_path":      {always, whyLibrary + " (from another directory)"},
	"extension_control_path":    {always, whyLibrary + " (extensions from another directory)"},
	"jit_provider":              {always, whyLibrary},
	// Listeners (the sandbox listens on 127.0.0.1 only).
	"listen_addresses": {always, whyListener + " (sandboxes listen on 127.0.0.1 only)"},
	"bonjour":          {always, whyListener + " (Bonjour advertising)"},
	"bonjour_name":     {always, whyListener + " (Bonjour advertising)"},
	// Other configuration files, and server paths.
	"include":              {always, whyFiles + " (includes another configuration file)"},
	"include_dir":          {always, whyFiles + " (includes other configuration files)"},
	"include_if_exists":    {always, whyFiles + " (includes another configuration file)"},
	"log_directory":        {pathOutside, whyFiles},
	"log_filename":         {pathOutside, whyFiles},
	"stats_temp_directory": {pathOutside, whyFiles},
	"krb_server_keyfile":   {pathOutside, whyFiles},
}

// mysqlExact are real MySQL-family options whose names begin another,
// unsafe or managed, option's name. The MySQL family takes an unambiguous
// beginning of an option's name for the option (init-fil is init_file, in
// option files too; MariaDB only warns), so any other beginning of a
// listed name is refused as that name; these are taken as themselves.
var mysqlExact = map[string]bool{
	"general_log": true, "slow_query_log": true, "log_slow_query": true, "lc_messages": true,
	"innodb": true, "innodb_doublewrite": true, "unix_socket": true,
}

// mysqlUnsafeNames are mysqlUnsafe's names in order, so that an
// abbreviation always names the same option.
var mysqlUnsafeNames = slices.Sorted(maps.Keys(mysqlUnsafe))

// abbreviates returns the first of names that the MySQL-family option name
// k is a strict beginning of, if k is not a real option itself.
func abbreviates(k string, names []string) (string, bool) {
	if mysqlExact[k] {
		return "", false
	}
	for _, n := range names {
		if len(n) > len(k) && strings.HasPrefix(n, k) {
			return n, true
		}
	}
	return "", false
}

// loosePrefixes are MySQL's option prefixes that do not change the option
// named (loose-: ignore if unknown; maximum-: set its upper bound).
var loosePrefixes = []string{"loose_", "maximum_"}

// boolPrefixes are MySQL's boolean option prefixes: skip-X, disable-X,
// enable-X set option X.
var boolPrefixes = []string{"skip_", "disable_", "enable_"}

// UnsafeSetting reports whether setting key=value is unsafe on servers of
// flavor, and why (a phrase completing "setting KEY ..."). An empty flavor
// (not known yet) checks every flavor's list.
func UnsafeSetting(flavor target.Flavor, key, value string) (why string, unsafe bool) {
	k := normKey(key)
	if flavor == "" || flavor.Family() == target.MySQL {
		if why, ok := mysqlRule(k, value); ok {
			return why, true
		}
	}
	if flavor == "" || flavor.Family() == target.Postgres {
		if r, ok := postgresUnsafe[k]; ok && r.applies(value) {
			return r.why, true
		}
	}
	return "", false
}

// mysqlRule looks a normalised MySQL-family option name up, with and
// without its prefixes.
func mysqlRule(k, value string) (string, bool) {
	for _, names := range mysqlNames(k) {
		if r, ok := mysqlUnsafe[names]; ok && r.applies(value) {
			return r.why, true
		}
		for p, r := range mysqlUnsafePrefixes {
			if (strings.HasPrefix(names, p) || strings.HasPrefix(p, names)) && r.applies(value) {
				return r.why, true
			}
		}
		if full, ok := abbreviates(names, mysqlUnsafeNames); ok && mysqlUnsafe[full].applies(value) {
			return mysqlUnsafe[full].why + " (the server reads " + names + " as " + full + ")", true
		}
	}
	return "", false
}

// mysqlNames returns the option names k may stand for: k itself and k
// without a loose-/maximum- prefix, each also without a skip-/enable-/
// disable- prefix (loose-skip-grant-tables is skip-grant-tables).
func mysqlNames(k string) []string {
	names := []string{k}
	for _, p := range loosePrefixes {
		if s, ok := strings.CutPrefix(k, p); ok {
			names = append(names, s)
		}
	}
	for _, n := range names {
		for _, p := range boolPrefixes {
			if s, ok := strings.CutPrefix(n, p); ok {
				names = append(names, s)
			}
		}
	}
	return names
}

// applies reports whether the rule refuses value.
func (r unsafeRule) applies(value string) bool {
	return r.kind == always || pathLeaves(value)
}

// pathLeaves reports whether a path setting's value names a file outside
// the server's own directories: absolute, from a home directory, or with a
// ".." element. Lists (innodb_data_file_path's "ibdata1:12M;ibdata2:1G",
// innodb_directories' "a;b") are checked element by element.
func pathLeaves(value string) bool {
	v := strings.Trim(strings.TrimSpace(value), `'"`)
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == ',' || r == ':' }) {
		part = strings.TrimSpace(part)
		if strings.HasPrefix(part, "/") || strings.HasPrefix(part, "~") || strings.HasPrefix(part, `\`) {
			return true
		}
		for _, el := range strings.FieldsFunc(part, func(r rune) bool { return r == '/' || r == '\\' }) {
			if el == ".." {
				return true
			}
		}
	}
	return false
}
