module informer-lab/compare

go 1.26

require informer-lab/record v0.0.0

require github.com/sergi/go-diff v1.4.0

replace informer-lab/record => ../record
