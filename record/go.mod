module informer-lab/record

go 1.23
