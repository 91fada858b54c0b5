// Patchbay storefront panel: lists the catalogue below with a buy button per product.
// Host functions used: Content.addPanel, Engine.openWebsite. No licensing happens here.
namespace PatchbayStorefront
{
    const var catalogue = {{json catalogue}};
    const var rowHeight = 40;

    inline function create(name, x, y)
    {
        local panel = Content.addPanel(name, x, y);
        panel.set("width", catalogue.uiWidth);
        panel.set("height", catalogue.uiHeight);
        panel.set("allowCallbacks", "Clicks Only");
        panel.setPaintRoutine(function(g)
        {
            g.fillAll(0xFF1E1E1E);
            g.setColour(0xFFFFFFFF);
            for (i = 0; i < catalogue.products.length; i++)
            {
                local p = catalogue.products[i];
                g.drawAlignedText(p.name + "  " + p.price + " " + p.currency.toUpperCase(), [10, i * rowHeight, this.getWidth() - 110, rowHeight], "left");
                g.drawRect([this.getWidth() - 100, i * rowHeight + 6, 90, rowHeight - 12], 1);
                g.drawAlignedText("Buy", [this.getWidth() - 100, i * rowHeight, 90, rowHeight], "centred");
            }
        });
        panel.setMouseCallback(function(event)
        {
            if (!event.clicked) return;
            local index = Math.floor(event.y / rowHeight);
            if (index >= 0 && index < catalogue.products.length && catalogue.products[index].storefrontUrl != "")
                Engine.openWebsite(catalogue.products[index].storefrontUrl);
        });
        return panel;
    }
}
