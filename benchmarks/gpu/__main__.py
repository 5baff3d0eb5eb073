from benchmarks.gpu.run import main

raise SystemExit(main())
