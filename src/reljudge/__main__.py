from reljudge.cli import main

main()
