<?xml version="1.0" encoding="UTF-8"?>
<tileset version="1.10" tiledversion="1.10.2" name="terrain" tilewidth="32" tileheight="32" tilecount="4" columns="4">
 <image source="terrain.png" width="128" height="32"/>
 <tile id="1">
  <properties>
   <property name="terrain" value="woods"/>
  </properties>
 </tile>
 <tile id="2">
  <properties>
   <property name="terrain" value="bog"/>
  </properties>
 </tile>
 <tile id="3">
  <properties>
   <property name="terrain" value="hill"/>
   <property name="elevation" type="float" value="2"/>
  </properties>
 </tile>
</tileset>
