"""The ``zope-pipeline`` command: one subcommand per module in commands/."""

import argparse
import importlib
import sys

from zope.configuration.exceptions import ConfigurationError

#: Subcommand modules, in the order ``--help`` lists them.  Each module has
#: ``NAME``, ``HELP``, ``add_arguments(parser)`` and ``run(args) -> int``.
COMMANDS = (
    'zope.pipeline.commands.show_pipeline',
    'zope.pipeline.commands.serve',
    'zope.pipeline.commands.restart',
    'zope.pipeline.commands.init_db',
    'zope.pipeline.commands.adduser',
    'zope.pipeline.commands.bench',
)


def build_parser():
    parser = argparse.ArgumentParser(
        prog='zope-pipeline',
        description='The Zope publisher as an explicit WSGI pipeline: '
                    'inspect, serve and measure a zope.pipeline site.')
    subparsers = parser.add_subparsers(dest='command', metavar='COMMAND')
    subparsers.required = True
    for dotted in COMMANDS:
        module = importlib.import_module(dotted)
        subparser = subparsers.add_parser(
            module.NAME, help=module.HELP, description=module.__doc__)
        module.add_arguments(subparser)
        subparser.set_defaults(run=module.run)
    return parser


def main(argv=None):
    """Run a subcommand; a configuration error is a message, not a trace."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except ConfigurationError as error:
        print('zope-pipeline %s: %s' % (args.command, error), file=sys.stderr)
        return 1


if __name__ == '__main__':  # pragma: no cover
    sys.exit(main())
