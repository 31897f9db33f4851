module informer-lab/envtestbin

go 1.23
