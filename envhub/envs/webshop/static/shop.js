// Option radios reload the item page with that option chosen (WebShop did this with jQuery
// from a CDN; envhub ships this local script instead).
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll('input[type="radio"][data-url]').forEach(function (radio) {
    radio.addEventListener("click", function () {
      window.location.href = radio.dataset.url;
    });
  });
});
