// Package runbook reads a runbook (docs/runbooks/*.md) into its ordered steps and their commands,
// so that a test can run the commands exactly as the admin reads them.
//
// The format is plain Markdown a person reads as before:
//
//   - a "## Placeholders" section lists every placeholder the commands use, one list item each:
//     "- `$OSD_ID`: the failed OSD's id";
//   - each step is a top-level numbered item ("1. ", "2. ", ... in order);
//   - a step's commands are in fenced ```sh blocks inside it, one command a line ("\" continues
//     a line, a trailing "# ..." is the command's comment). A command is one program with its
//     arguments: no pipes, redirections, command substitution or variables other than
//     placeholders ($NAME or ${NAME}, upper case), so it runs as an argv without a shell;
//   - `<!-- not run: REASON -->` on the line before a block says why no drill runs it;
//     `<!-- not run by DRILL: REASON -->` (DRILL a test package's path, such as test/ceph) says
//     why that drill does not run it, while the others do (Block.SkippedBy).
//
// Parse refuses a placeholder a command uses but the section does not declare, one declared but
// never used, a step out of order and a block outside a step; Argv refuses a value missing or
// given for a name the runbook does not declare. Each error names the line and the placeholder.
package runbook
