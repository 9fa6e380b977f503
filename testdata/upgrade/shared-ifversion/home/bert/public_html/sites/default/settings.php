<?php /* sites/default/settings.php */ ?>
