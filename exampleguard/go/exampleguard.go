// Package exampleguard makes a cobra program speak the exampleguard tree protocol.
//
// Written by `exampleguard init --cobra`; regenerate it with a newer exampleguard rather than
// editing it. Wire it with one line before the root command runs:
//
//	exampleguard.Register(rootCmd)
//
// Register does nothing unless the program is run as `PROGRAM __exampleguard tree` or
// `PROGRAM __exampleguard judge`: every other run of the program is left exactly as it was.
// Then cobra routes the words to a hidden command, and while cobra parses that command's flag,
// before any initializer, hook or run function of the program, the protocol runs and the
// program exits:
//
//   - tree prints the command tree as exampleguard's tree snapshot (exampleguard.tree/v1,
//     dialect "cobra"): paths, aliases, hidden and deprecated commands, runnable or not, each
//     command's argument validator (probed by behaviour: Go functions cannot be compared),
//     local and persistent flags with their shorthands, value types, NoOptDefVal, required
//     flags, flag groups, and the command lines of each command's Example;
//   - judge reads one JSON array of words per line on standard input and writes one verdict
//     per line, {"accepted", "path", "given", "error"}: cobra's own verdict on those words,
//     found by cobra's own Find or Traverse, ParseFlags, ValidateArgs, ValidateRequiredFlags
//     and ValidateFlagGroups, with no command body run. Each command line is judged in a fresh
//     process of the program (pflag values keep state that cannot be reset), which exits as
//     soon as its verdict is written.
//
// It needs nothing but cobra (1.6 or newer) and the standard library.
package exampleguard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

const (
	commandWord = "__exampleguard"
	requestFlag = "exampleguard-request"
	judgeOne    = "judge-one"

	// cobra's flag annotations; the last is set by MarkFlagsOneRequired (cobra 1.8 and newer).
	requiredFlag      = "cobra_annotation_bash_completion_one_required_flag"
	requiredTogether  = "cobra_annotation_required_if_others_set"
	mutuallyExclusive = "cobra_annotation_mutually_exclusive"
	oneRequired       = "cobra_annotation_one_required"

	// The most arguments a validator is probed with: past it, a minimum has no maximum.
	probedArgs = 64
)

// Register adds the hidden protocol command to root when the program is run for the protocol.
//
// Call it once, on the root command, before Execute (and after the program's own SetArgs,
// if it calls that). In every other run it does nothing.
func Register(root *cobra.Command) {
	n := len(os.Args)
	if n < 3 || os.Args[n-2] != commandWord {
		return
	}
	hidden := &cobra.Command{
		Use:    commandWord,
		Hidden: true,
		// Never reached: the request runs while cobra parses the flag below.
		Run: func(*cobra.Command, []string) {},
	}
	hidden.Flags().Var(&request{root: root, hidden: hidden}, requestFlag, "")
	root.AddCommand(hidden)
	root.SetArgs([]string{commandWord, "--" + requestFlag + "=" + os.Args[n-1]})
}

// request is the hidden command's flag: setting it answers the request and exits.
type request struct {
	root, hidden *cobra.Command
}

func (r *request) String() string { return "" }
func (r *request) Type() string   { return "string" }

func (r *request) Set(name string) error {
	restore(r.root, r.hidden)
	var err error
	switch name {
	case "tree":
		err = writeTree(os.Stdout, r.root)
	case "judge":
		err = judgeLines(os.Stdin, os.Stdout)
	case judgeOne:
		err = judgeInChild(r.root)
	default:
		err = fmt.Errorf("unknown request %q: tree or judge", name)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "exampleguard:", err)
		os.Exit(1)
	}
	os.Exit(0)
	return nil
}

// restore takes back what the protocol run added to the tree, so that the tree is the one a
// plain run of the program sees: the hidden command, and cobra's help and completion commands
// where they were added only because the hidden command made the root a group.
func restore(root, hidden *cobra.Command) {
	root.RemoveCommand(hidden)
	for _, c := range root.Commands() {
		if c.Name() != "help" && c.Name() != "completion" {
			return
		}
	}
	root.RemoveCommand(root.Commands()...)
}

// -- the tree -----------------------------------------------------------------------------------

type treeJSON struct {
	Format           string        `json:"format"`
	Program          string        `json:"program"`
	Dialect          string        `json:"dialect"`
	Framework        string        `json:"framework"`
	FrameworkVersion string        `json:"framework_version,omitempty"`
	FindSkipsValues  bool          `json:"find_skips_flag_values"`
	Commands         []commandJSON `json:"commands"`
}

type commandJSON struct {
	Path         []string        `json:"path"`
	Aliases      [][]string      `json:"aliases,omitempty"`
	Runnable     bool            `json:"runnable"`
	Hidden       bool            `json:"hidden,omitempty"`
	Description  string          `json:"description,omitempty"`
	Parameters   []parameterJSON `json:"parameters"`
	Constraints  constraintsJSON `json:"constraints"`
	Settings     settingsJSON    `json:"settings"`
	HelpExamples []helpJSON      `json:"help_examples,omitempty"`
}

type parameterJSON struct {
	Name         string      `json:"name"`
	Flags        []string    `json:"flags,omitempty"`
	Positional   bool        `json:"positional,omitempty"`
	Type         string      `json:"type"`
	Choices      []string    `json:"choices,omitempty"`
	Required     *bool       `json:"required,omitempty"`
	Multiple     bool        `json:"multiple,omitempty"`
	Nargs        interface{} `json:"nargs,omitempty"`
	Count        bool        `json:"count,omitempty"`
	Persistent   bool        `json:"persistent,omitempty"`
	Description  string      `json:"description,omitempty"`
	Default      interface{} `json:"default,omitempty"`
	Hidden       bool        `json:"hidden,omitempty"`
	Eager        bool        `json:"eager,omitempty"`
	Min          interface{} `json:"min,omitempty"`
	Max          interface{} `json:"max,omitempty"`
	PflagType    string      `json:"pflag_type,omitempty"`
	NoOptDefault *string     `json:"no_opt_default,omitempty"`
}

type constraintsJSON struct {
	RequireOneOf      [][]string `json:"require_one_of"`
	RequireTogether   [][]string `json:"require_together"`
	MutuallyExclusive [][]string `json:"mutually_exclusive"`
}

type settingsJSON struct {
	AllowInterspersedArgs bool `json:"allow_interspersed_args"`
	IgnoreUnknownOptions  bool `json:"ignore_unknown_options,omitempty"`
	MinArgs               int  `json:"min_args,omitempty"`
	MaxArgs               *int `json:"max_args,omitempty"`
	LegacyArgs            bool `json:"legacy_args,omitempty"`
	CustomArgs            bool `json:"custom_args,omitempty"`
	TraverseChildren      bool `json:"traverse_children,omitempty"`
	DisableFlagParsing    bool `json:"disable_flag_parsing,omitempty"`
}

type helpJSON struct {
	Command string `json:"command"`
	Field   string `json:"field"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
}

func writeTree(out io.Writer, root *cobra.Command) error {
	// A plain run adds cobra's help and completion commands to a root with subcommands.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	tree := treeJSON{
		Format:           "exampleguard.tree/v1",
		Program:          root.Name(),
		Dialect:          "cobra",
		Framework:        "cobra",
		FrameworkVersion: cobraVersion(),
		FindSkipsValues:  findSkipsFlagValues(),
	}
	var walk func(c *cobra.Command, path []string)
	walk = func(c *cobra.Command, path []string) {
		tree.Commands = append(tree.Commands, describe(root, c, path))
		for _, sub := range c.Commands() {
			if sub.Name() == cobra.ShellCompRequestCmd {
				continue
			}
			walk(sub, append(append([]string{}, path...), sub.Name()))
		}
	}
	walk(root, []string{})
	data, err := json.Marshal(tree)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	w.Write(data)
	w.WriteString("\n")
	return w.Flush()
}

// findSkipsFlagValues tells, by behaviour, whether this cobra's Find takes a command's word
// out past the flag values before it (1.7 and newer) or takes the first equal word (1.6).
func findSkipsFlagValues() bool {
	probe := &cobra.Command{Use: "probe"}
	probe.PersistentFlags().String("f", "", "")
	probe.PersistentFlags().Bool("b", false, "")
	probe.AddCommand(&cobra.Command{Use: "x", Run: func(*cobra.Command, []string) {}})
	_, args, err := probe.Find([]string{"--f", "x", "--b", "x"})
	return err == nil && len(args) == 3 && args[1] == "x"
}

func cobraVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, dep := range info.Deps {
		if dep.Path == "github.com/spf13/cobra" {
			if dep.Replace != nil {
				return strings.TrimPrefix(dep.Replace.Version, "v")
			}
			return strings.TrimPrefix(dep.Version, "v")
		}
	}
	return ""
}

func describe(root, c *cobra.Command, path []string) commandJSON {
	// cobra adds these as the command runs; they are part of what its parser accepts.
	c.InitDefaultHelpFlag()
	c.InitDefaultVersionFlag()
	cmd := commandJSON{
		Path:        path,
		Runnable:    c.Runnable(),
		Hidden:      c.Hidden || c.Deprecated != "" || builtIn(root, c),
		Description: c.Short,
		Parameters:  []parameterJSON{},
		Constraints: constraintsJSON{[][]string{}, [][]string{}, [][]string{}},
	}
	if c.Deprecated != "" {
		cmd.Description = strings.TrimSpace(cmd.Description + " (deprecated: " + c.Deprecated + ")")
	}
	if len(path) > 0 {
		for _, alias := range c.Aliases {
			spelled := append(append([]string{}, path[:len(path)-1]...), alias)
			cmd.Aliases = append(cmd.Aliases, spelled)
		}
	}
	persistent := c.PersistentFlags()
	taken := map[string]bool{}
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		taken[f.Name] = true
		cmd.Parameters = append(cmd.Parameters, flagParameter(c, f, persistent.Lookup(f.Name) == f))
	})
	c.Flags().VisitAll(func(f *pflag.Flag) { taken[f.Name] = true })
	if positional, ok := positionalParameter(c, taken); ok {
		cmd.Parameters = append(cmd.Parameters, positional)
	}
	cmd.Constraints = flagGroups(c)
	cmd.Settings = settings(root, c)
	cmd.HelpExamples = exampleLines(c.Example, root.Name())
	return cmd
}

// builtIn says whether c is one of the commands cobra adds itself (help, completion and its
// shells): they are cobra's, not the program's, so they are exported hidden.
func builtIn(root, c *cobra.Command) bool {
	for p := c; p != nil && p.Parent() != nil; p = p.Parent() {
		if p.Parent() != root {
			continue
		}
		help := p.Name() == "help" && p.Use == "help [command]"
		completion := p.Name() == "completion" &&
			strings.HasPrefix(p.Short, "Generate the autocompletion script")
		return help || completion
	}
	return false
}

func flagParameter(c *cobra.Command, f *pflag.Flag, persistent bool) parameterJSON {
	p := parameterJSON{
		Name:        f.Name,
		Flags:       []string{"--" + f.Name},
		Persistent:  persistent,
		Description: f.Usage,
		Hidden:      f.Hidden || f.Deprecated != "",
		PflagType:   f.Value.Type(),
	}
	if f.Shorthand != "" {
		p.Flags = append(p.Flags, "-"+f.Shorthand)
	}
	if f.NoOptDefVal != "" {
		value := f.NoOptDefVal
		p.NoOptDefault = &value
	}
	// cobra stops at help, and at version where the command has one, before anything else.
	if f.Value.Type() == "bool" && (f.Name == "help" || f.Name == "version" && c.Version != "") {
		p.Eager = true
	}
	if required := f.Annotations[requiredFlag]; len(required) > 0 && required[0] == "true" {
		yes := true
		p.Required = &yes
	}
	kind := f.Value.Type()
	switch kind {
	case "bool":
		p.Type = "boolean"
		p.Default = f.DefValue == "true"
	case "string":
		p.Type = "string"
		if f.DefValue != "" {
			p.Default = f.DefValue
		}
	case "count":
		p.Type = "integer"
		p.Count = true
	case "int", "int8", "int16", "int32", "int64":
		p.Type = "integer"
		bits := bitSize(kind, "int")
		p.Min = -(int64(1) << (bits - 1))
		p.Max = int64(1)<<(bits-1) - 1
	case "uint", "uint8", "uint16", "uint32", "uint64":
		p.Type = "integer"
		bits := bitSize(kind, "uint")
		p.Min = 0
		p.Max = uint64(math.MaxUint64) >> (64 - bits)
	case "float32", "float64":
		p.Type = "number"
	case "stringSlice", "stringArray":
		p.Type = "string"
		p.Multiple = true
	case "intSlice":
		p.Type = "integer"
		p.Multiple = true
	default:
		p.Type = "string"
	}
	if f.NoOptDefVal != "" && kind != "bool" && kind != "count" {
		p.Nargs = "?"
	}
	if kind == "bool" && f.NoOptDefVal != "true" {
		// A switch that needs its value written out: cobra reads the next word.
		p.Nargs = 1
	}
	return p
}

func bitSize(kind, prefix string) uint {
	bits, err := strconv.Atoi(strings.TrimPrefix(kind, prefix))
	if err != nil {
		return 64
	}
	return uint(bits)
}

// positionalParameter is the command's arguments as one positional parameter, by what its
// validator accepts; taken are the flag names, which the parameter's name must not be.
func positionalParameter(c *cobra.Command, taken map[string]bool) (parameterJSON, bool) {
	rule := argsRule(c)
	if rule.max != nil && *rule.max == 0 && !rule.custom && !rule.legacy {
		return parameterJSON{}, false
	}
	p := parameterJSON{Name: positionalName(taken), Positional: true, Type: "string", Nargs: -1}
	if !rule.custom && rule.max != nil && *rule.max == rule.min {
		p.Nargs = rule.min
	}
	required := rule.min > 0
	p.Required = &required
	if rule.onlyValid {
		p.Choices = validArgs(c)
	}
	return p, true
}

func positionalName(taken map[string]bool) string {
	name := "args"
	for taken[name] {
		name = "_" + name
	}
	return name
}

func validArgs(c *cobra.Command) []string {
	valid := []string{}
	for _, v := range c.ValidArgs {
		valid = append(valid, strings.Split(v, "\t")[0])
	}
	return valid
}

type argsRuleJSON struct {
	legacy, custom, onlyValid bool
	min                       int
	max                       *int
}

// argsRule tells what the command's argument validator accepts, by calling it: with 0 to
// probedArgs valid words (a contiguous range of counts is a minimum and a maximum), then with
// a word outside ValidArgs (OnlyValidArgs). Anything else is a custom validator.
func argsRule(c *cobra.Command) argsRuleJSON {
	if c.Args == nil {
		return argsRuleJSON{legacy: true}
	}
	word := "exampleguard-probe"
	if valid := validArgs(c); len(valid) > 0 {
		word = valid[0]
	}
	accepted := make([]bool, probedArgs+1)
	first, last := -1, -1
	for n := 0; n <= probedArgs; n++ {
		args := make([]string, n)
		for i := range args {
			args[i] = word
		}
		accepted[n] = safeValidate(c, args)
		if accepted[n] {
			if first < 0 {
				first = n
			}
			last = n
		}
	}
	if first < 0 {
		return argsRuleJSON{custom: true}
	}
	for n := first; n <= last; n++ {
		if !accepted[n] {
			return argsRuleJSON{custom: true}
		}
	}
	rule := argsRuleJSON{min: first}
	if last < probedArgs {
		max := last
		rule.max = &max
	}
	if len(c.ValidArgs) > 0 {
		probe := first
		if probe == 0 {
			probe = 1
		}
		if probe <= last {
			args := make([]string, probe)
			for i := range args {
				args[i] = word
			}
			args[probe-1] = "\x00exampleguard-not-valid"
			rule.onlyValid = !safeValidate(c, args)
		}
	}
	// A validator that looks at the words themselves, beyond ValidArgs: custom.
	if first <= last && last >= 1 {
		args := make([]string, first)
		for i := range args {
			args[i] = "--exampleguard-other"
		}
		if first > 0 && !rule.onlyValid && !safeValidate(c, args) {
			rule.custom = true
		}
	}
	return rule
}

func safeValidate(c *cobra.Command, args []string) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return c.ValidateArgs(args) == nil
}

func flagGroups(c *cobra.Command) constraintsJSON {
	groups := constraintsJSON{[][]string{}, [][]string{}, [][]string{}}
	flags := c.Flags()
	seen := map[string]bool{}
	add := func(into *[][]string, annotation string) {
		flags.VisitAll(func(f *pflag.Flag) {
			for _, group := range f.Annotations[annotation] {
				key := annotation + "\x00" + group
				if seen[key] {
					continue
				}
				seen[key] = true
				names := strings.Split(group, " ")
				// cobra considers a group only where all of its flags are defined.
				complete := true
				for _, name := range names {
					if flags.Lookup(name) == nil {
						complete = false
					}
				}
				if complete {
					*into = append(*into, names)
				}
			}
		})
	}
	add(&groups.RequireTogether, requiredTogether)
	add(&groups.MutuallyExclusive, mutuallyExclusive)
	if enforcesOneRequired() {
		add(&groups.RequireOneOf, oneRequired)
	}
	return groups
}

// enforcesOneRequired tells, by behaviour, whether this cobra checks MarkFlagsOneRequired's
// annotation (1.8 and newer); an older one ignores it, and so does the snapshot.
func enforcesOneRequired() bool {
	probe := &cobra.Command{Use: "probe", Run: func(*cobra.Command, []string) {}}
	probe.Flags().Bool("a", false, "")
	probe.Flags().Bool("b", false, "")
	for _, name := range []string{"a", "b"} {
		probe.Flags().SetAnnotation(name, oneRequired, []string{"a b"})
	}
	return probe.ValidateFlagGroups() != nil
}

func settings(root, c *cobra.Command) settingsJSON {
	s := settingsJSON{
		AllowInterspersedArgs: interspersed(c),
		IgnoreUnknownOptions:  c.FParseErrWhitelist.UnknownFlags,
		DisableFlagParsing:    c.DisableFlagParsing,
		TraverseChildren:      c == root && root.TraverseChildren,
	}
	rule := argsRule(c)
	s.LegacyArgs = rule.legacy
	s.CustomArgs = rule.custom
	if !rule.legacy && !rule.custom {
		s.MinArgs = rule.min
		s.MaxArgs = rule.max
	}
	return s
}

// interspersed tells whether the command's flags may follow its arguments: pflag keeps the
// setting private, so a probe parse says (this process exits right after the tree).
func interspersed(c *cobra.Command) bool {
	flags := c.Flags()
	if err := flags.Parse([]string{"exampleguard-probe", "--"}); err != nil {
		return true
	}
	return len(flags.Args()) == 1
}

// exampleLines are the command lines of a cobra Example, which cobra shows under "Examples:":
// a line prompted with "$ " anywhere, else (when none is prompted) a line that starts with the
// program's name; a line ending in a backslash continues on the next.
func exampleLines(text, program string) []helpJSON {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	lines := strings.Split(text, "\n")
	session := false
	for _, line := range lines {
		if strings.HasPrefix(strings.TrimLeft(line, " \t"), "$ ") {
			session = true
		}
	}
	var found []helpJSON
	for i := 0; i < len(lines); i++ {
		raw := lines[i]
		stripped := strings.TrimLeft(raw, " \t")
		indent := len(raw) - len(stripped)
		number := i + 1
		prompted := strings.HasPrefix(stripped, "$ ")
		var cut int
		switch {
		case prompted:
			cut = indent + 2
		case !session && startsWithProgram(stripped, program):
			cut = indent
		default:
			continue
		}
		pieces := []string{raw[cut:]}
		for strings.HasSuffix(pieces[len(pieces)-1], "\\") && i+1 < len(lines) {
			i++
			next := lines[i]
			if prompted && strings.HasPrefix(strings.TrimLeft(next, " \t"), "> ") {
				next = strings.TrimLeft(next, " \t")[2:]
			}
			pieces = append(pieces, next)
		}
		found = append(found, helpJSON{strings.Join(pieces, "\n"), "example", number, cut + 1})
	}
	return found
}

func startsWithProgram(text, program string) bool {
	if !strings.HasPrefix(text, program) {
		return false
	}
	rest := text[len(program):]
	return rest == "" || rest[0] == ' ' || rest[0] == '\t'
}

// -- judging ------------------------------------------------------------------------------------

// judgeLines judges each JSON array of words read from in, each in a fresh process of the
// program, and writes the verdicts to out in order.
func judgeLines(in io.Reader, out io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	args := append(append([]string{}, os.Args[1:len(os.Args)-1]...), judgeOne)
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 1<<20), 64<<20)
	w := bufio.NewWriter(out)
	for scanner.Scan() {
		verdict, err := judgeOneLine(self, args, scanner.Bytes())
		if err != nil {
			return err
		}
		w.Write(verdict)
		w.WriteString("\n")
	}
	if err := scanner.Err(); err != nil {
		return err
	}
	return w.Flush()
}

func judgeOneLine(self string, args []string, line []byte) ([]byte, error) {
	reading, writing, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	child := exec.Command(self, args...)
	child.Stdin = bytes.NewReader(line)
	child.ExtraFiles = []*os.File{writing}
	var stderr bytes.Buffer
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		reading.Close()
		writing.Close()
		return nil, err
	}
	writing.Close()
	verdict, readErr := io.ReadAll(io.LimitReader(reading, 64<<20))
	reading.Close()
	waitErr := child.Wait()
	verdict = bytes.TrimSpace(verdict)
	if readErr != nil || len(verdict) == 0 || bytes.ContainsRune(verdict, '\n') {
		tail := strings.TrimSpace(stderr.String())
		if len(tail) > 400 {
			tail = tail[len(tail)-400:]
		}
		return nil, fmt.Errorf("the program gave no verdict for %s (%v): %s", line, waitErr, tail)
	}
	return verdict, nil
}

// judgeInChild reads one JSON array of words on standard input and writes cobra's verdict on
// them to descriptor 3.
func judgeInChild(root *cobra.Command) error {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	var args []string
	if err := json.Unmarshal(data, &args); err != nil {
		return fmt.Errorf("the request is not a JSON array of words: %v", err)
	}
	out := os.NewFile(3, "verdict")
	_, err = out.Write(append(judge(root, args).encode(), '\n'))
	return err
}

type verdict struct {
	accepted bool
	path     []string
	given    [][2]string // name, JSON value
	err      string
}

func (v verdict) encode() []byte {
	var b bytes.Buffer
	b.WriteString(`{"accepted":`)
	b.WriteString(strconv.FormatBool(v.accepted))
	if v.path != nil {
		path, _ := json.Marshal(v.path)
		b.WriteString(`,"path":`)
		b.Write(path)
	}
	if v.accepted {
		b.WriteString(`,"given":{`)
		for i, item := range v.given {
			if i > 0 {
				b.WriteString(",")
			}
			name, _ := json.Marshal(item[0])
			b.Write(name)
			b.WriteString(":")
			b.WriteString(item[1])
		}
		b.WriteString("}")
	}
	if v.err != "" {
		message, _ := json.Marshal(v.err)
		b.WriteString(`,"error":`)
		b.Write(message)
	}
	b.WriteString("}")
	return b.Bytes()
}

func commandPath(root, c *cobra.Command) []string {
	if c == nil {
		return nil
	}
	path := []string{}
	for p := c; p != nil && p != root; p = p.Parent() {
		path = append([]string{p.Name()}, path...)
	}
	return path
}

func rejected(root, c *cobra.Command, err error) verdict {
	return verdict{path: commandPath(root, c), err: err.Error()}
}

// judge is cobra's ExecuteC and execute up to the command's Run, without running anything of
// the program: the command found, its flags parsed, help and version, whether it runs at all,
// its arguments, required flags and flag groups.
func judge(root *cobra.Command, args []string) verdict {
	recordWords(root)
	root.InitDefaultHelpCmd()
	if newer, ok := interface{}(root).(completionWithArgs); ok {
		// cobra 1.9 and newer: __complete first, then completion, which a program without
		// subcommands gets only where the words call it.
		shellCompletion(root, args)
		newer.InitDefaultCompletionCmd(args...)
	} else {
		root.InitDefaultCompletionCmd()
		shellCompletion(root, args)
	}
	var c *cobra.Command
	var flags []string
	var err error
	if root.TraverseChildren {
		c, flags, err = root.Traverse(args)
	} else {
		c, flags, err = root.Find(args)
	}
	if err != nil {
		return rejected(root, c, err)
	}
	c.InitDefaultHelpFlag()
	c.InitDefaultVersionFlag()
	if err := c.ParseFlags(flags); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			// An undefined -h or --help: cobra shows the help, and succeeds.
			return verdict{accepted: true, path: commandPath(root, c), given: [][2]string{{"help", "true"}}}
		}
		return rejected(root, c, err)
	}
	if help, err := c.Flags().GetBool("help"); err == nil && help {
		return accepted(root, c, nil)
	}
	if c.Version != "" {
		if version, err := c.Flags().GetBool("version"); err == nil && version {
			return accepted(root, c, nil)
		}
	}
	if !c.Runnable() {
		return rejected(root, c, fmt.Errorf("%q needs a subcommand: cobra prints its help and runs nothing", c.CommandPath()))
	}
	positional := c.Flags().Args()
	if c.DisableFlagParsing {
		positional = flags
	}
	if err := c.ValidateArgs(positional); err != nil {
		return rejected(root, c, err)
	}
	if err := c.ValidateRequiredFlags(); err != nil {
		return rejected(root, c, err)
	}
	if err := c.ValidateFlagGroups(); err != nil {
		return rejected(root, c, err)
	}
	return accepted(root, c, positional)
}

// completionWithArgs is cobra 1.9's InitDefaultCompletionCmd, which takes the words.
type completionWithArgs interface {
	InitDefaultCompletionCmd(args ...string)
}

// shellCompletion adds cobra's hidden __complete command where the words run it, as ExecuteC
// does before it looks for the command.
func shellCompletion(root *cobra.Command, args []string) {
	complete := &cobra.Command{
		Use:                cobra.ShellCompRequestCmd,
		Aliases:            []string{cobra.ShellCompNoDescRequestCmd},
		Hidden:             true,
		DisableFlagParsing: true,
		Args:               cobra.MinimumNArgs(1),
		Run:                func(*cobra.Command, []string) {},
	}
	root.AddCommand(complete)
	found, _, err := root.Find(args)
	if err != nil || found.Name() != cobra.ShellCompRequestCmd {
		root.RemoveCommand(complete)
	}
}

// accepted is the verdict on a command line cobra would run, with every flag set on the way
// (the command's, its parents' persistent ones, and with TraverseChildren its parents' own)
// and the arguments (positional, nil when eager).
func accepted(root, c *cobra.Command, positional []string) verdict {
	v := verdict{accepted: true, path: commandPath(root, c)}
	seen := map[string]bool{}
	taken := map[string]bool{}
	for p := c; p != nil; p = p.Parent() {
		p.Flags().VisitAll(func(f *pflag.Flag) {
			if p == c {
				taken[f.Name] = true
			}
			if f.Changed && !seen[f.Name] {
				seen[f.Name] = true
				v.given = append(v.given, [2]string{f.Name, flagValue(f)})
			}
		})
	}
	sort.Slice(v.given, func(i, j int) bool { return v.given[i][0] < v.given[j][0] })
	if len(positional) > 0 {
		words, _ := json.Marshal(positional)
		v.given = append(v.given, [2]string{positionalName(taken), string(words)})
	}
	return v
}

// modelled are the pflag types whose values exampleguard converts as pflag does; a flag of any
// other type (a duration, an application's own Value) is reported by the word it was given.
var modelled = map[string]bool{
	"bool": true, "string": true, "count": true, "float32": true, "float64": true,
	"int": true, "int8": true, "int16": true, "int32": true, "int64": true,
	"uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true,
	"stringSlice": true, "stringArray": true, "intSlice": true,
}

// recorded is a flag's Value that also keeps the last word it was set with.
type recorded struct {
	pflag.Value
	last string
}

func (r *recorded) Set(word string) error {
	if err := r.Value.Set(word); err != nil {
		return err
	}
	r.last = word
	return nil
}

// recordWords wraps the Value of every flag of a type exampleguard does not model, so that
// the verdict can say which word it was given (this process judges one command line).
func recordWords(c *cobra.Command) {
	wrap := func(f *pflag.Flag) {
		if _, done := f.Value.(*recorded); !done && !modelled[f.Value.Type()] {
			f.Value = &recorded{Value: f.Value}
		}
	}
	c.Flags().VisitAll(wrap)
	c.PersistentFlags().VisitAll(wrap)
	for _, sub := range c.Commands() {
		recordWords(sub)
	}
}

// flagValue is what the program reads from the flag, as JSON: booleans, numbers (non-finite
// ones as NaN, Infinity, -Infinity), lists of a slice flag's items; for a type exampleguard
// does not model, the last word the flag was given.
func flagValue(f *pflag.Flag) string {
	if r, ok := f.Value.(*recorded); ok {
		data, _ := json.Marshal(r.last)
		return string(data)
	}
	text := f.Value.String()
	kind := f.Value.Type()
	switch kind {
	case "bool":
		if b, err := strconv.ParseBool(text); err == nil {
			return strconv.FormatBool(b)
		}
	case "int", "int8", "int16", "int32", "int64", "count":
		if _, err := strconv.ParseInt(text, 10, 64); err == nil {
			return text
		}
	case "uint", "uint8", "uint16", "uint32", "uint64":
		if _, err := strconv.ParseUint(text, 10, 64); err == nil {
			return text
		}
	case "float32", "float64":
		bits := 64
		if kind == "float32" {
			bits = 32
		}
		if value, err := strconv.ParseFloat(text, bits); err == nil {
			return number(value)
		}
	}
	if slice, ok := f.Value.(pflag.SliceValue); ok {
		items := slice.GetSlice()
		if kind == "intSlice" {
			return "[" + strings.Join(items, ",") + "]"
		}
		data, _ := json.Marshal(items)
		return string(data)
	}
	data, _ := json.Marshal(text)
	return string(data)
}

func number(value float64) string {
	switch {
	case math.IsNaN(value):
		return "NaN"
	case math.IsInf(value, 1):
		return "Infinity"
	case math.IsInf(value, -1):
		return "-Infinity"
	}
	text := strconv.FormatFloat(value, 'g', -1, 64)
	if !strings.ContainsAny(text, ".eEn") {
		text += ".0"
	}
	return text
}
