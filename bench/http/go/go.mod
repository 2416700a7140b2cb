module cell-http-go

go 1.19
