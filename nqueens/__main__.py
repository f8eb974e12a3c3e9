from nqueens.cli import main

main(prog_name="nqueens")
