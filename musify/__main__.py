from musify.cli import main

main()
