// Command photo turns a clean greyscale page render into a photograph-like
// scan for the OCR fixtures: paper tint with uneven lighting, a slight
// rotation, blur, sensor noise and strong JPEG compression. The noise comes
// from a fixed seed, so the output is the same on every run.
//
//	go run ./testdata/ocr/src/photo.go in.png out.jpg
package main

import (
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: photo in.png out.jpg")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "photo:", err)
		os.Exit(1)
	}
}

func run(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	src, err := png.Decode(f)
	f.Close()
	if err != nil {
		return err
	}
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	lum := make([]float64, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			lum[y*w+x] = float64(color.GrayModel.Convert(src.At(b.Min.X+x, b.Min.Y+y)).(color.Gray).Y)
		}
	}
	// Rotate by 0.6 degrees around the centre (bilinear), paper outside.
	const angle = 0.6 * math.Pi / 180
	sin, cos := math.Sin(angle), math.Cos(angle)
	cx, cy := float64(w)/2, float64(h)/2
	rot := make([]float64, w*h)
	at := func(x, y int) float64 {
		if x < 0 || y < 0 || x >= w || y >= h {
			return 255
		}
		return lum[y*w+x]
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			dx, dy := float64(x)-cx, float64(y)-cy
			sx, sy := cos*dx+sin*dy+cx, -sin*dx+cos*dy+cy
			x0, y0 := int(math.Floor(sx)), int(math.Floor(sy))
			fx, fy := sx-float64(x0), sy-float64(y0)
			top := at(x0, y0)*(1-fx) + at(x0+1, y0)*fx
			bot := at(x0, y0+1)*(1-fx) + at(x0+1, y0+1)*fx
			rot[y*w+x] = top*(1-fy) + bot*fy
		}
	}
	// 3x3 box blur: an out-of-focus camera.
	blur := make([]float64, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var s float64
			for j := -1; j <= 1; j++ {
				for i := -1; i <= 1; i++ {
					xx, yy := min(max(x+i, 0), w-1), min(max(y+j, 0), h-1)
					s += rot[yy*w+xx]
				}
			}
			blur[y*w+x] = s / 9
		}
	}
	// Paper tint, lighting falling off towards one corner, Gaussian noise.
	rng := rand.New(rand.NewPCG(24, 1))
	dst := image.NewGray(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			light := 1 - 0.28*(float64(x)/float64(w)*0.5+float64(y)/float64(h)*0.5)
			v := (blur[y*w+x]/255*0.78 + 0.12) * 255 * light // ink never black, paper never white
			v += rng.NormFloat64() * 12
			dst.Pix[y*dst.Stride+x] = uint8(min(max(v, 0), 255))
		}
	}
	o, err := os.Create(out)
	if err != nil {
		return err
	}
	if err := jpeg.Encode(o, dst, &jpeg.Options{Quality: 30}); err != nil {
		o.Close()
		return err
	}
	return o.Close()
}
