from popview.cli import run

run()
