"""The ``zope-pipeline`` command: one subcommand per module in commands/.

The command imports zope.pipeline and the libraries it depends on, never
anything from the current directory (the benchmark harness of a checkout
runs as ``python -m benchmarks``)."""

import argparse
import importlib
import importlib.metadata
import sys
import textwrap

from zope.configuration.exceptions import ConfigurationError

#: Subcommand modules, in the order ``--help`` lists them.  Each module has
#: ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``;
#: its docstring, in plain text, is the subcommand's description.
COMMANDS = (
    'zope.pipeline.commands.create',
    'zope.pipeline.commands.show_pipeline',
    'zope.pipeline.commands.explain',
    'zope.pipeline.commands.request',
    'zope.pipeline.commands.serve',
    'zope.pipeline.commands.shell',
    'zope.pipeline.commands.run',
    'zope.pipeline.commands.restart',
    'zope.pipeline.commands.init_db',
    'zope.pipeline.commands.adduser',
    'zope.pipeline.commands.pack',
    'zope.pipeline.commands.check',
    'zope.pipeline.commands.convert',
)

#: The width descriptions are filled to (argparse's own default width).
DESCRIPTION_WIDTH = 78


def version():
    """The installed distribution's version."""
    return importlib.metadata.version('zope.pipeline')


def plain_paragraphs(text):
    """``text``'s paragraphs, each filled to the help's width, separated by
    blank lines (argparse would run them together)."""
    paragraphs = textwrap.dedent(text or '').strip().split('\n\n')
    return '\n\n'.join(textwrap.fill(' '.join(paragraph.split()),
                                     DESCRIPTION_WIDTH)
                       for paragraph in paragraphs)


def build_parser():
    parser = argparse.ArgumentParser(
        prog='zope-pipeline',
        description='The Zope publisher as an explicit WSGI pipeline: '
                    'create, inspect, serve, maintain and script a '
                    'zope.pipeline site.')
    parser.add_argument('--version', action='version',
                        version='%(prog)s ' + version(),
                        help="print zope.pipeline's version and exit")
    subparsers = parser.add_subparsers(dest='command', metavar='COMMAND')
    subparsers.required = True
    for dotted in COMMANDS:
        module = importlib.import_module(dotted)
        subparser = subparsers.add_parser(
            module.NAME, help=module.HELP,
            description=plain_paragraphs(module.__doc__),
            formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(subparser)
        subparser.set_defaults(run=module.run)
    return parser


def main(argv=None):
    """Run a subcommand; a configuration error is a message, not a trace."""
    args = build_parser().parse_args(argv)
    # serve --reload runs the same command line again in its worker.
    args.argv = list(sys.argv[1:] if argv is None else argv)
    try:
        return args.run(args)
    except ConfigurationError as error:
        print('zope-pipeline %s: %s' % (args.command, error), file=sys.stderr)
        return 1
    except LookupError as error:
        if type(error) is not LookupError:  # KeyError, IndexError: a bug
            raise
        # paste.deploy's: no such section, or no such application
        print('zope-pipeline %s: %s.  %s' % (args.command, error, INI_HINT),
              file=sys.stderr)
        return 1


#: What to change when paste.deploy finds no application in an ini.
INI_HINT = ('Name an [app:NAME] section of the ini with --name (default: '
            'main), whose `use` names an installed application (e.g. '
            'egg:zope.pipeline#main).')


if __name__ == '__main__':  # pragma: no cover
    sys.exit(main())
